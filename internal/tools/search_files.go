package tools

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/talaria-agent/talaria/internal/regularfile"
)

// search_files limits.
const (
	SearchDefaultLimit = 50
	SearchMaxLimit     = 500
	SearchMaxContext   = 10
)

// searchQuery is a search_files call: its arguments.
type searchQuery struct {
	Pattern    string `json:"pattern" jsonschema:"RE2 regular expression (content) or glob (files)."`
	Target     string `json:"target,omitempty" jsonschema:"What to search: lines of files (content, the default) or file names (files)."`
	Path       string `json:"path,omitempty" jsonschema:"Directory (or, for content, one file) to search. Default: the working directory."`
	FileGlob   string `json:"file_glob,omitempty" jsonschema:"Only files matching this glob, e.g. \"*.go\"."`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema:"Match case-insensitively. Default false."`
	Context    int    `json:"context,omitempty" jsonschema:"Lines of context around each match (at most 10). Default 0."`
	Limit      int    `json:"limit,omitempty" jsonschema:"Results to return (at most 500). Default 50."`
	Offset     int    `json:"offset,omitempty" jsonschema:"Results to skip (next_offset of the previous call). Default 0."`
}

// SearchFiles is the search_files tool; searching reads only.
var SearchFiles = Define(Spec[searchQuery]{
	Name: "search_files",
	Description: `Search files under a directory (default: the working directory). ` +
		`target "content" (default): lines matching pattern, an RE2 regular expression (no backreferences or lookaround), shown as "path:line:text", with context lines as "path-line-text" and "--" between groups. ` +
		`target "files": files whose name (or, for a pattern with "/", path relative to the directory) matches pattern, a glob ("*.go", "**/test_*.py"). ` +
		`file_glob keeps only the files it matches; ignore_case matches case-insensitively; context adds up to 10 lines around each match. ` +
		`.gitignore'd files, .git, binary files, symbolic links and files over 10 MB are skipped. ` +
		`Results come in path order, limit at a time (default 50, at most 500); when truncated is true, call again with next_offset. ` +
		`Use this instead of grep or find in the terminal.`,
	Meta:       searchFilesMeta,
	Idempotent: true,
	Run:        searchFiles,
})

type searchResult struct {
	Results      string `json:"results"`
	Count        int    `json:"count"`
	FilesScanned int    `json:"files_scanned"`
	Truncated    bool   `json:"truncated"`
	NextOffset   int    `json:"next_offset,omitempty"`
}

// normalize checks q and fills in its defaults.
func (q *searchQuery) normalize() error {
	if q.Pattern == "" {
		return invalidArgs("search_files", `"pattern" must not be empty`)
	}
	q.Target, q.Path = cmp.Or(strings.TrimSpace(q.Target), "content"), cmp.Or(strings.TrimSpace(q.Path), ".")
	if q.Target != "content" && q.Target != "files" {
		return invalidArgs("search_files", `"target" must be "content" or "files", got %q`, q.Target)
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"context", q.Context}, {"offset", q.Offset}} {
		if n.v < 0 {
			return invalidArgs("search_files", "%q must be 0 or more, got %d", n.name, n.v)
		}
	}
	if q.Limit < 0 {
		return invalidArgs("search_files", `"limit" must be at least 1, got %d`, q.Limit)
	}
	q.Context, q.Limit = min(q.Context, SearchMaxContext), min(cmp.Or(q.Limit, SearchDefaultLimit), SearchMaxLimit)
	if q.FileGlob = strings.TrimSpace(q.FileGlob); q.FileGlob != "" && !doublestar.ValidatePattern(q.FileGlob) {
		return invalidArgs("search_files", `"file_glob" %q is not a valid glob`, q.FileGlob)
	}
	return nil
}

// searchFiles runs one search_files call.
func searchFiles(ctx context.Context, env Env, q searchQuery) (string, error) {
	if err := q.normalize(); err != nil {
		return "", err
	}
	source, err := env.readablePath("search_files", q.Path)
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
		if err := walkSearchable(ctx, env, source.Real, q.FileGlob, visit); err != nil {
			return fmt.Errorf("search_files %s: %w", source.Abs, err)
		}
		return nil
	}
	var res searchResult
	switch {
	case q.Target == "files" && !info.IsDir():
		return "", invalidArgs("search_files", `"path" %s is a file; the files target searches a directory`, source.Abs)
	case q.Target == "files":
		if !doublestar.ValidatePattern(q.Pattern) {
			return "", invalidArgs("search_files", `"pattern" %q is not a valid glob`, q.Pattern)
		}
		var files []string
		if err := walk(func(p string) bool { files = append(files, p); return true }); err != nil {
			return "", err
		}
		res = matchNames(files, source.Real, q)
	default:
		expr := q.Pattern
		if q.IgnoreCase {
			expr = "(?i)" + expr
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return "", invalidArgs("search_files", `"pattern" is not an RE2 regular expression: %v`, err)
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
		if !globMatches(q.Pattern, name) {
			continue
		}
		matched++
		if matched <= q.Offset {
			continue
		}
		if len(out) == q.Limit {
			res.Truncated, res.NextOffset = true, q.Offset+len(out)
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
				j.hits <- grepFile(j.path, displayPath(root, j.path), re, pre, q.Context)
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
			if seen <= q.Offset {
				continue
			}
			if len(out) == q.Limit || size+len(g) > maxChars-200 {
				res.Truncated, res.NextOffset = true, q.Offset+len(out)
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
	if q.Context > 0 {
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
var _ = builtin(func(Services) Tool { return SearchFiles })

var searchFilesMeta = Meta{
	Toolset:      "file",
	Guidance:     "Find code and files with search_files (a regular expression over contents, or a glob over names) rather than grep or find in the terminal.",
	GuidanceRank: 50,
	FromCode:     true,
}
