package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// read_file limits.
const (
	ReadFileDefaultLimit = 500
	ReadFileMaxLimit     = 2000
	// ReadFileMaxLineChars is the length after which a line is cut.
	ReadFileMaxLineChars = 2000
	// binarySniffBytes is how much of a file is checked for NUL bytes.
	binarySniffBytes = 8192
)

const readFileDescription = `Read a text file and return its lines numbered like "     7|text" (line number, a pipe, then the line). ` +
	`Relative paths resolve against the working directory; "~" is the home directory. ` +
	`offset is the 1-based first line to return (default 1); limit is how many lines to return (default 500, at most 2000). ` +
	`Lines longer than 2000 characters are cut with a marker. Binary files are refused, and so are credential files and Talaria's own secrets. ` +
	`The result is JSON: {"content","total_lines","offset","lines_returned","truncated"}; when truncated is true there are more lines, and next_offset tells where to continue. ` +
	`Use this instead of cat/head/tail in the terminal.`

const readFileSchema = `{"type":"object","properties":{` +
	`"path":{"type":"string","description":"Path of the file to read, absolute or relative to the working directory."},` +
	`"offset":{"type":"integer","minimum":1,"description":"1-based line number to start reading from. Default 1."},` +
	`"limit":{"type":"integer","minimum":1,"maximum":2000,"description":"Maximum number of lines to return. Default 500, at most 2000."}` +
	`},"required":["path"],"additionalProperties":false}`

// ReadFileTool is the read_file tool. The zero value is ready to use.
type ReadFileTool struct{}

// readFileResult is read_file's JSON result.
type readFileResult struct {
	Content       string `json:"content"`
	TotalLines    int    `json:"total_lines"`
	Offset        int    `json:"offset"`
	LinesReturned int    `json:"lines_returned"`
	Truncated     bool   `json:"truncated"`
	NextOffset    int    `json:"next_offset,omitempty"`
}

// Name implements Tool.
func (ReadFileTool) Name() string { return "read_file" }

// Idempotent implements Tool: reading has no side effects.
func (ReadFileTool) Idempotent() bool { return true }

// BoundsOwnOutput implements OutputBounder: the window of lines stops at
// the cap (counted once escaped).
func (ReadFileTool) BoundsOwnOutput() bool { return true }

// Definition implements Tool.
func (t ReadFileTool) Definition() openai.Tool {
	return functionTool(t.Name(), readFileDescription, readFileSchema)
}

// Run implements Tool.
func (t ReadFileTool) Run(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
	a, err := parseArgs(t.Name(), raw)
	if err != nil {
		return "", err
	}
	path, err := a.requiredPath()
	if err != nil {
		return "", err
	}
	offset, ok, err := a.integer("offset")
	if err != nil {
		return "", err
	}
	if !ok || offset == 0 {
		offset = 1
	}
	if offset < 0 {
		return "", a.errorf(`"offset" must be a line number >= 1, got %d`, offset)
	}
	limit, ok, err := a.integer("limit")
	if err != nil {
		return "", err
	}
	if !ok || limit == 0 {
		limit = ReadFileDefaultLimit
	}
	if limit < 0 {
		return "", a.errorf(`"limit" must be >= 1, got %d`, limit)
	}
	limit = min(limit, ReadFileMaxLimit)

	source, err := env.readablePath(t.Name(), path)
	if err != nil {
		return "", err
	}
	// The open does not wait (O_NONBLOCK), and the opened file must be a
	// regular one: a FIFO, socket or device would block or never end.
	f, err := env.openReadable(t.Name(), source)
	if err != nil {
		return "", explainOpenError(t.Name(), source, err)
	}
	defer f.Close()
	if err := checkOpenedRegular(t.Name(), source.Abs, f); err != nil {
		return "", err
	}
	res, err := readLines(ctx, f, offset, limit, env.maxOutput())
	if err != nil {
		return "", fmt.Errorf("read_file %s: %w", source.Abs, err)
	}
	return marshalResult(res)
}

// readLines streams the open file once: it numbers the requested window
// and counts the remaining lines. The content stops early, at a line
// boundary, when it would exceed maxChars.
func readLines(ctx context.Context, f *os.File, offset, limit, maxChars int) (readFileResult, error) {
	res := readFileResult{Offset: offset}
	info, err := f.Stat()
	if err != nil {
		return res, err
	}
	if why := notRegular("read_file", info.Mode()); why != "" {
		return res, errors.New(why)
	}

	r := bufio.NewReaderSize(f, 64*1024)
	head, err := r.Peek(binarySniffBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return res, err
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return res, fmt.Errorf("%w: it contains NUL bytes; read_file only reads text", ErrBinaryFile)
	}

	var content strings.Builder
	contentChars := 0
	line := 0
	stopped := false // the window ended before the requested limit because of the output cap
	for {
		if line%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return res, fmt.Errorf("%w: %w", ErrCancelled, err)
			}
		}
		text, long, err := readLine(r, ReadFileMaxLineChars)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return res, err
		}
		line++
		if line < offset || res.LinesReturned >= limit || stopped {
			continue
		}
		numbered := formatLine(line, text, long)
		n := capLen(numbered)
		if res.LinesReturned > 0 && contentChars+n > maxChars {
			stopped = true
			continue
		}
		content.WriteString(numbered)
		contentChars += n
		res.LinesReturned++
	}
	res.TotalLines = line
	if line > 0 && offset > line {
		return res, fmt.Errorf("offset %d is past the end of the file (total_lines %d)", offset, line)
	}
	res.Content = strings.TrimSuffix(content.String(), "\n")
	if last := offset + res.LinesReturned - 1; res.LinesReturned > 0 && last < line {
		res.Truncated = true
		res.NextOffset = last + 1
	}
	return res, nil
}

// formatLine renders one numbered line, ending in a newline.
func formatLine(n int, text string, cut int) string {
	var b strings.Builder
	num := strconv.Itoa(n)
	for i := len(num); i < 6; i++ {
		b.WriteByte(' ')
	}
	b.WriteString(num)
	b.WriteByte('|')
	b.WriteString(text)
	if cut > 0 {
		fmt.Fprintf(&b, " [... line truncated, %d more characters]", cut)
	}
	b.WriteByte('\n')
	return b.String()
}

// readLine reads one line without its line ending. It keeps at most
// maxChars characters and reports how many more characters the line had;
// memory stays bounded however long the line is. It returns io.EOF only when
// there is no further line.
func readLine(r *bufio.Reader, maxChars int) (string, int, error) {
	byteCap := maxChars * utf8.UTFMax
	var kept []byte
	extra := 0 // characters beyond byteCap
	sawAny := false
	for {
		chunk, err := r.ReadSlice('\n')
		if len(chunk) > 0 {
			sawAny = true
		}
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		if room := byteCap - len(kept); room > 0 {
			take := min(room, len(chunk))
			kept = append(kept, chunk[:take]...)
			chunk = chunk[take:]
		}
		for _, c := range chunk {
			if utf8.RuneStart(c) {
				extra++
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return "", 0, err
		}
		if err != nil && !sawAny {
			return "", 0, io.EOF
		}
		break
	}
	if extra == 0 {
		kept = bytes.TrimSuffix(kept, []byte("\r"))
	}
	s := string(kept)
	n := utf8.RuneCountInString(s)
	if n <= maxChars && extra == 0 {
		return s, 0, nil
	}
	if n > maxChars {
		s = s[:byteOffsetOfRune(s, maxChars)]
	}
	return s, n - utf8.RuneCountInString(s) + extra, nil
}

// read_file is a built-in tool.
var _ = builtin(func(Services) Tool { return ReadFileTool{} })

// Meta implements Described.
func (ReadFileTool) Meta() Meta {
	return Meta{
		Toolset:      "file",
		Guidance:     "Read a file with read_file before you change it, and read again rather than relying on memory of it.",
		GuidanceRank: 20,
		FromCode:     true,
	}
}
