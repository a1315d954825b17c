package tools

import (
	"bufio"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// searchMaxFileBytes is the largest file search_files reads.
const searchMaxFileBytes = 10 << 20

// alwaysSkipped are directories search_files never enters.
var alwaysSkipped = map[string]bool{".git": true, ".hg": true, ".svn": true}

// walkSearchable visits the regular files under root that a search reads,
// in lexical order, until visit returns false: .gitignore'd paths (every .gitignore on the way down
// applies to its directory), version-control directories, symbolic links,
// and files the policy keeps from tools are left out (grepFile leaves out
// files over the size limit); glob, when set, keeps the files whose path relative to root
// (or, for a pattern without "/", whose name) it matches.
func walkSearchable(ctx context.Context, env Env, root, glob string, visit func(path string) bool) error {
	ignores := map[string][]gitignore.Pattern{}
	guard := env.Policy.readGuard()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // unreadable: left out
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		inherited := ignores[filepath.Dir(p)]
		if d.IsDir() {
			if p != root && (alwaysSkipped[d.Name()] || gitignore.NewMatcher(inherited).Match(parts, true)) {
				return filepath.SkipDir
			}
			own := inherited
			if p == root {
				parts = nil
			}
			if extra := readIgnoreFile(filepath.Join(p, ".gitignore"), parts); len(extra) > 0 {
				own = append(append([]gitignore.Pattern(nil), inherited...), extra...)
			}
			ignores[p] = own
			return nil
		}
		if !d.Type().IsRegular() || gitignore.NewMatcher(inherited).Match(parts, false) {
			return nil
		}
		if glob != "" && !globMatches(glob, rel) {
			return nil
		}
		if _, protected := guard.protected(p); protected {
			return nil
		}
		if !visit(p) {
			return filepath.SkipAll
		}
		return nil
	})
	return err
}

// readIgnoreFile reads a .gitignore's patterns for the directory at
// domain (its path parts under the search root).
func readIgnoreFile(path string, domain []string) []gitignore.Pattern {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []gitignore.Pattern
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimRight(s.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, gitignore.ParsePattern(line, domain))
	}
	return out
}

// globMatches reports whether a file glob matches rel: its whole path for
// a pattern with a "/", else its name. A malformed glob matches nothing.
// Pure.
func globMatches(glob, rel string) bool {
	rel = filepath.ToSlash(rel)
	if !strings.Contains(glob, "/") {
		rel = filepath.Base(rel)
	}
	ok, err := doublestar.Match(glob, rel)
	return err == nil && ok
}
