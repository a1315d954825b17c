package tools

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
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

// readFileArgs are read_file's arguments.
type readFileArgs struct {
	Path   string `json:"path" jsonschema:"Path of the file to read, absolute or relative to the working directory."`
	Offset int    `json:"offset,omitempty" jsonschema:"1-based line number to start reading from. Default 1."`
	Limit  int    `json:"limit,omitempty" jsonschema:"Maximum number of lines to return. Default 500, at most 2000."`
}

// ReadFile is the read_file tool.
var ReadFile = Define(Spec[readFileArgs]{
	Name: "read_file",
	Description: `Read a text file and return its lines numbered like "     7|text" (line number, a pipe, then the line). ` +
		`Relative paths resolve against the working directory; "~" is the home directory. ` +
		`offset is the 1-based first line to return (default 1); limit is how many lines to return (default 500, at most 2000). ` +
		`Lines longer than 2000 characters are cut with a marker. Binary files are refused, and so are credential files and Talaria's own secrets. ` +
		`The result is JSON: {"content","total_lines","offset","lines_returned","truncated"}; when truncated is true there are more lines, and next_offset tells where to continue. ` +
		`Use this instead of cat/head/tail in the terminal.`,
	Meta: Meta{
		Toolset:      "file",
		Guidance:     "Read a file with read_file before you change it, and read again rather than relying on memory of it.",
		GuidanceRank: 20,
		FromCode:     true,
	},
	Quick:           true, // reading a capped file
	Idempotent:      true, // reading has no side effects
	BoundsOwnOutput: true, // the window of lines stops at the cap (counted once escaped)
	Run:             readFile,
})

// readFileResult is read_file's JSON result.
type readFileResult struct {
	Content       string `json:"content"`
	TotalLines    int    `json:"total_lines"`
	Offset        int    `json:"offset"`
	LinesReturned int    `json:"lines_returned"`
	Truncated     bool   `json:"truncated"`
	NextOffset    int    `json:"next_offset,omitempty"`
}

// readFile reads the window of lines a asks for.
func readFile(ctx context.Context, env Env, a readFileArgs) (string, error) {
	if err := requirePath("read_file", a.Path); err != nil {
		return "", err
	}
	if a.Offset < 0 {
		return "", invalidArgs("read_file", `"offset" must be a line number >= 1, got %d`, a.Offset)
	}
	if a.Limit < 0 {
		return "", invalidArgs("read_file", `"limit" must be >= 1, got %d`, a.Limit)
	}
	offset, limit := cmp.Or(a.Offset, 1), min(cmp.Or(a.Limit, ReadFileDefaultLimit), ReadFileMaxLimit)
	source, err := env.readablePath("read_file", a.Path)
	if err != nil {
		return "", err
	}
	// The open does not wait (O_NONBLOCK), and the opened file must be a
	// regular one: a FIFO, socket or device would block or never end.
	f, err := env.openReadable("read_file", source)
	if err != nil {
		return "", explainOpenError("read_file", source, err)
	}
	defer f.Close()
	if err := checkOpenedRegular("read_file", source.Abs, f); err != nil {
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
var _ = builtin(func(Services) Tool { return ReadFile })
