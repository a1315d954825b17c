package tools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// listDirectoryArgs are list_directory's arguments.
type listDirectoryArgs struct {
	Path   string `json:"path,omitempty" jsonschema:"The directory to list; default the working directory."`
	Hidden bool   `json:"hidden,omitempty" jsonschema:"Also list names that start with a dot."`
}

// listDirectoryShown and listDirectoryRead bound what one call lists and
// how many entries it reads to count them.
const (
	listDirectoryShown = 500
	listDirectoryRead  = 20_000
)

// dirEntry is one listed entry: type is file, dir, symlink or other; size
// is a file's, in bytes.
type dirEntry struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int64  `json:"size,omitempty"`
}

// listDirectoryResult is list_directory's JSON result. Total counts the
// entries read (more exist when Truncated); Hidden the dot names left out;
// Withheld the entries that are never read by tools (credentials,
// $TALARIA_HOME's secrets), named nowhere.
type listDirectoryResult struct {
	Path      string     `json:"path"`
	Entries   []dirEntry `json:"entries"`
	Total     int        `json:"total"`
	Hidden    int        `json:"hidden,omitempty"`
	Withheld  int        `json:"withheld,omitempty"`
	Truncated bool       `json:"truncated,omitempty"`
}

var _ = builtin(func(Services) Tool {
	return Define(Spec[listDirectoryArgs]{
		Name: "list_directory",
		Description: `List a directory's entries: directories first, then by name, each with its type (file, dir, symlink, other) and a file's size in bytes. ` +
			`Names starting with a dot are left out unless hidden is true. At most 500 entries are shown. ` +
			`The result is JSON: {"path","entries":[{"name","type","size"}],"total","hidden","withheld","truncated"}.`,
		Meta: Meta{
			Toolset:  "file",
			Guidance: "See what a directory holds with list_directory rather than ls in the terminal.",
			FromCode: true,
		},
		Quick:      true,
		Idempotent: true,
		Run:        listDirectory,
	})
})

// listDirectory lists the directory a names, under the read rules of
// env's policy: the directory must be readable, and an entry that is never
// read by tools is left out and counted.
func listDirectory(ctx context.Context, env Env, a listDirectoryArgs) (string, error) {
	path := a.Path
	if strings.TrimSpace(path) == "" {
		path = "."
	}
	dir, err := env.readablePath("list_directory", path)
	if err != nil {
		return "", err
	}
	// Opened as read_file opens a file: what was opened is checked again,
	// so a directory swapped for a symlink after the check gains nothing,
	// and the entries are judged by where they really are.
	f, err := env.openReadable("list_directory", dir)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.IsDir() {
		return "", fmt.Errorf("list_directory: %s is not a directory (read a file with read_file)", dir.Abs)
	}
	where := dir.Real
	if opened, ok := openedPath(f); ok {
		where = opened
	}
	res := listDirectoryResult{Path: dir.Abs, Entries: []dirEntry{}}
	guard := env.Policy.readGuard()
	for {
		if res.Total >= listDirectoryRead {
			if more, _ := f.ReadDir(1); len(more) > 0 {
				res.Truncated = true
			}
			break
		}
		batch, err := f.ReadDir(min(256, listDirectoryRead-res.Total))
		for _, e := range batch {
			res.Total++
			switch {
			case strings.HasPrefix(e.Name(), ".") && !a.Hidden:
				res.Hidden++
			case isWithheld(guard, filepath.Join(where, e.Name())):
				res.Withheld++
			default:
				res.Entries = append(res.Entries, entryOf(e))
			}
		}
		if errors.Is(err, io.EOF) || len(batch) == 0 {
			break
		}
		if err != nil {
			return "", fmt.Errorf("list_directory: %s: %w", dir.Abs, err)
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("%w: list_directory: %w", ErrCancelled, ctx.Err())
		}
	}
	dirsFirst := func(e dirEntry) int {
		if e.Type == "dir" {
			return 0
		}
		return 1
	}
	slices.SortFunc(res.Entries, func(x, y dirEntry) int {
		return cmp.Or(cmp.Compare(dirsFirst(x), dirsFirst(y)), cmp.Compare(x.Name, y.Name))
	})
	if len(res.Entries) > listDirectoryShown {
		res.Entries, res.Truncated = res.Entries[:listDirectoryShown], true
	}
	return marshalResult(res)
}

// isWithheld says whether an entry is one tools never read.
func isWithheld(guard readGuard, real string) bool {
	_, bad := guard.protected(real)
	return bad
}

// entryOf is a directory entry as listed.
func entryOf(e fs.DirEntry) dirEntry {
	out := dirEntry{Name: e.Name(), Type: "other"}
	switch t := e.Type(); {
	case t.IsDir():
		out.Type = "dir"
	case t&fs.ModeSymlink != 0:
		out.Type = "symlink"
	case t.IsRegular():
		out.Type = "file"
		if info, err := e.Info(); err == nil {
			out.Size = info.Size()
		}
	}
	return out
}
