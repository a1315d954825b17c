package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/regularfile"
)

// search_files limits.
const (
	SearchDefaultLimit = 50
	SearchMaxLimit     = 500
	SearchMaxContext   = 10
)

const searchFilesDescription = `Search files under a directory (default: the working directory). ` +
	`target "content" (default): lines matching pattern, an RE2 regular expression (no backreferences or lookaround), shown as "path:line:text", with context lines as "path-line-text" and "--" between groups. ` +
	`target "files": files whose name (or, for a pattern with "/", path relative to the directory) matches pattern, a glob ("*.go", "**/test_*.py"). ` +
	`file_glob keeps only the files it matches; ignore_case matches case-insensitively; context adds up to 10 lines around each match. ` +
	`.gitignore'd files, .git, binary files, symbolic links and files over 10 MB are skipped. ` +
	`Results come in path order, limit at a time (default 50, at most 500); when truncated is true, call again with next_offset. ` +
	`Use this instead of grep or find in the terminal.`

const searchFilesSchema = `{"type":"object","properties":{` +
	`"pattern":{"type":"string","description":"RE2 regular expression (content) or glob (files)."},` +
	`"target":{"type":"string","enum":["content","files"],"description":"What to search: lines of files (default) or file names."},` +
	`"path":{"type":"string","description":"Directory (or, for content, one file) to search. Default: the working directory."},` +
	`"file_glob":{"type":"string","description":"Only files matching this glob, e.g. \"*.go\"."},` +
	`"ignore_case":{"type":"boolean","description":"Match case-insensitively. Default false."},` +
	`"context":{"type":"integer","minimum":0,"maximum":10,"description":"Lines of context around each match. Default 0."},` +
	`"limit":{"type":"integer","minimum":1,"maximum":500,"description":"Results to return. Default 50."},` +
	`"offset":{"type":"integer","minimum":0,"description":"Results to skip (next_offset of the previous call). Default 0."}` +
	`},"required":["pattern"],"additionalProperties":false}`

// SearchFilesTool is the search_files tool. The zero value is ready to use.
type SearchFilesTool struct{}

type searchResult struct {
	Results      string `json:"results"`
	Count        int    `json:"count"`
	FilesScanned int    `json:"files_scanned"`
	Truncated    bool   `json:"truncated"`
	NextOffset   int    `json:"next_offset,omitempty"`
}

// Name implements Tool.
func (SearchFilesTool) Name() string { return "search_files" }

// Idempotent implements Tool: searching reads only.
func (SearchFilesTool) Idempotent() bool { return true }

// Definition implements Tool.
func (t SearchFilesTool) Definition() openai.Tool {
	return functionTool(t.Name(), searchFilesDescription, searchFilesSchema)
}

// searchQuery is a decoded search_files call.
type searchQuery struct {
	pattern, target, path, glob string
	ignoreCase                  bool
	context, limit, offset      int
}

func parseSearch(a args) (searchQuery, error) {
	q := searchQuery{target: "content", path: "."}
	var err error
	if q.pattern, err = a.requiredStr("pattern"); err != nil {
		return q, err
	}
	if q.pattern == "" {
		return q, a.errorf(`"pattern" must not be empty`)
	}
	for name, dst := range map[string]*string{"target": &q.target, "path": &q.path, "file_glob": &q.glob} {
		if v, ok, err := a.str(name); err != nil {
			return q, err
		} else if ok && strings.TrimSpace(v) != "" {
			*dst = v
		}
	}
	if q.target != "content" && q.target != "files" {
		return q, a.errorf(`"target" must be "content" or "files", got %q`, q.target)
	}
	if q.ignoreCase, _, err = a.boolean("ignore_case"); err != nil {
		return q, err
	}
	for _, n := range []struct {
		name     string
		dst      *int
		def, max int
	}{{"context", &q.context, 0, SearchMaxContext}, {"limit", &q.limit, SearchDefaultLimit, SearchMaxLimit}, {"offset", &q.offset, 0, -1}} {
		v, ok, err := a.integer(n.name)
		if err != nil {
			return q, err
		}
		if !ok {
			v = n.def
		}
		if v < 0 || n.name == "limit" && v == 0 {
			return q, a.errorf("%q must be %s, got %d", n.name, map[bool]string{true: "at least 1", false: "0 or more"}[n.name == "limit"], v)
		}
		if n.max > 0 {
			v = min(v, n.max)
		}
		*n.dst = v
	}
	if q.glob != "" && !doublestar.ValidatePattern(q.glob) {
		return q, a.errorf(`"file_glob" %q is not a valid glob`, q.glob)
	}
	return q, nil
}

// Run implements Tool.
func (t SearchFilesTool) Run(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
	a, err := parseArgs(t.Name(), raw)
	if err != nil {
		return "", err
	}
	q, err := parseSearch(a)
	if err != nil {
		return "", err
	}
	source, err := env.readablePath(t.Name(), q.path)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(source.Real)
	if err != nil {
		return "", fmt.Errorf("search_files %s: %w", source.Abs, err)
	}
	// walk visits the files searched: those under the directory, or the one file.
	walk := func(visit func(string) bool) error {
		if !info.IsDir() {
			visit(source.Real)
			return nil
		}
		if err := walkSearchable(ctx, env, source.Real, q.glob, visit); err != nil {
			return fmt.Errorf("search_files %s: %w", source.Abs, err)
		}
		return nil
	}
	var res searchResult
	switch {
	case q.target == "files" && !info.IsDir():
		return "", a.errorf(`"path" %s is a file; the files target searches a directory`, source.Abs)
	case q.target == "files":
		if !doublestar.ValidatePattern(q.pattern) {
			return "", a.errorf(`"pattern" %q is not a valid glob`, q.pattern)
		}
		var files []string
		if err := walk(func(p string) bool { files = append(files, p); return true }); err != nil {
			return "", err
		}
		res = matchNames(files, source.Real, q)
	default:
		expr := q.pattern
		if q.ignoreCase {
			expr = "(?i)" + expr
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return "", a.errorf(`"pattern" is not an RE2 regular expression: %v`, err)
		}
		if res, err = grepFiles(ctx, walk, source.Real, re, q, env.maxOutput()); err != nil {
			return "", err
		}
	}
	if res.Count == 0 && !res.Truncated {
		res.Results = "(no matches)"
	}
	return marshalResult(res)
}

// displayPath is a file's path as results show it: relative to the
// searched directory (its name, when the search is of that one file).
func displayPath(root, p string) string {
	rel, err := filepath.Rel(root, p)
	switch {
	case err != nil:
		return p
	case rel == ".":
		return filepath.Base(p)
	}
	return rel
}

// matchNames keeps the files whose name matches the glob. Pure.
func matchNames(files []string, root string, q searchQuery) searchResult {
	res := searchResult{FilesScanned: len(files)}
	var out []string
	matched := 0
	for _, f := range files {
		name := displayPath(root, f)
		if !globMatches(q.pattern, name) {
			continue
		}
		matched++
		if matched <= q.offset {
			continue
		}
		if len(out) == q.limit {
			res.Truncated, res.NextOffset = true, q.offset+len(out)
			break
		}
		out = append(out, name)
	}
	res.Results, res.Count = strings.Join(out, "\n"), len(out)
	return res
}

// fileHits are one file's matching lines, formatted, one entry a match.
type fileHits struct{ groups []string }

// grepJob is one file to search and where its hits go.
type grepJob struct {
	path string
	hits chan fileHits
}

// grepFiles searches the files walk visits, several at a time while the
// walk goes on, and keeps the matches in walk order from offset on, limit
// of them, within maxChars; the walk stops once they are found.
func grepFiles(ctx context.Context, walk func(func(string) bool) error, root string, re *regexp.Regexp, q searchQuery, maxChars int) (searchResult, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	// A file with no match anywhere is passed over without splitting it
	// into lines: every line match is a match of the multi-line form.
	pre := regexp.MustCompile("(?m)" + re.String())
	workers := min(runtime.GOMAXPROCS(0), 8)
	jobs, ordered := make(chan grepJob, 4*workers), make(chan grepJob, 64*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				j.hits <- grepFile(j.path, displayPath(root, j.path), re, pre, q.context)
			}
		})
	}
	walkErr := make(chan error, 1)
	go func() {
		defer close(ordered)
		defer close(jobs)
		walkErr <- walk(func(p string) bool {
			j := grepJob{path: p, hits: make(chan fileHits, 1)}
			select {
			case ordered <- j:
			case <-ctx.Done():
				return false
			}
			jobs <- j
			return true
		})
	}()
	res := searchResult{}
	var out []string
	size, seen := 0, 0
	for j := range ordered {
		h := <-j.hits
		res.FilesScanned++
		for _, g := range h.groups {
			seen++
			if seen <= q.offset {
				continue
			}
			if len(out) == q.limit || size+len(g) > maxChars-200 {
				res.Truncated, res.NextOffset = true, q.offset+len(out)
				break
			}
			out, size = append(out, g), size+len(g)+1
		}
		if res.Truncated {
			break
		}
	}
	stop()
	for j := range ordered { // let the walk and the workers end
		<-j.hits
	}
	wg.Wait()
	if err := <-walkErr; err != nil && !res.Truncated {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return res, fmt.Errorf("search_files: %w: %w", ErrCancelled, err)
		}
		return res, err
	}
	sep := "\n"
	if q.context > 0 {
		sep = "\n--\n"
	}
	res.Results, res.Count = strings.Join(out, sep), len(out)
	return res, nil
}

// grepFile finds the lines of one file matching re, each with context
// lines around it; a binary, unreadable or too large file (or a symbolic
// link swapped in since the walk), or one pre does not match, has none.
func grepFile(path, shown string, re, pre *regexp.Regexp, context int) fileHits {
	data, err := regularfile.ReadAtMost(path, searchMaxFileBytes)
	if err != nil || bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 || !pre.Match(data) {
		return fileHits{}
	}
	var lines []string
	s := bufio.NewScanner(bytes.NewReader(data))
	s.Buffer(make([]byte, 0, 64*1024), searchMaxFileBytes)
	for s.Scan() {
		lines = append(lines, strings.TrimSuffix(s.Text(), "\r"))
	}
	var h fileHits
	for i, l := range lines {
		if !re.MatchString(l) {
			continue
		}
		var g []string
		for j := max(0, i-context); j <= min(len(lines)-1, i+context); j++ {
			mark := "-"
			if j == i {
				mark = ":"
			}
			g = append(g, fmt.Sprintf("%s%s%d%s%s", shown, mark, j+1, mark, clipLine(lines[j])))
		}
		h.groups = append(h.groups, strings.Join(g, "\n"))
	}
	return h
}

// search_files is a built-in tool.
var _ = builtin(func(Services) Tool { return SearchFilesTool{} })

// Meta implements Described.
func (SearchFilesTool) Meta() Meta {
	return Meta{
		Toolset:      "file",
		Guidance:     "Find code and files with search_files (a regular expression over contents, or a glob over names) rather than grep or find in the terminal.",
		GuidanceRank: 50,
		FromCode:     true,
	}
}
