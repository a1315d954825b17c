package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ContextCap caps the project context file, in characters.
const ContextCap = 20000

// Project context files. NearContextFiles are searched from the working
// directory upward to the git root, nearest first, the first name winning
// within one directory; WorkdirContextFiles only in the working directory,
// after them, in this order.
var (
	NearContextFiles    = []string{".talaria.md", "TALARIA.md"}
	WorkdirContextFiles = []string{"AGENTS.md", "CLAUDE.md", ".cursorrules"}
)

// FindContextFile returns the project context file for workdir and its
// text; path is "" when there is none. An empty (blank) file counts as
// absent and the search goes on.
func FindContextFile(workdir string) (path, text string, err error) {
	if workdir == "" {
		return "", "", nil
	}
	start, err := filepath.Abs(workdir)
	if err != nil {
		return "", "", fmt.Errorf("project context: resolve %q: %w", workdir, err)
	}
	for dir := start; ; {
		if path, text, err := firstFile(dir, NearContextFiles); path != "" || err != nil {
			return path, text, err
		}
		isRoot, err := isGitRoot(dir)
		if err != nil {
			return "", "", err
		}
		parent := filepath.Dir(dir)
		if isRoot || parent == dir {
			break
		}
		dir = parent
	}
	return firstFile(start, WorkdirContextFiles)
}

// firstFile returns the first of names in dir that exists and is not blank.
func firstFile(dir string, names []string) (path, text string, err error) {
	for _, name := range names {
		p := filepath.Join(dir, name)
		t, ok, err := readOptional(p)
		if err != nil {
			return "", "", fmt.Errorf("project context: %w", err)
		}
		if ok && strings.TrimSpace(t) != "" {
			return p, t, nil
		}
	}
	return "", "", nil
}

// isGitRoot reports whether dir contains .git (a directory, or a file in
// a worktree or submodule).
func isGitRoot(dir string) (bool, error) {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("project context: %w %s: %w", ErrUnreadable, filepath.Join(dir, ".git"), err)
}

// contextSection renders the project context file.
func contextSection(workdir string) (string, error) {
	path, text, err := FindContextFile(workdir)
	if err != nil || path == "" {
		return "", err
	}
	return fmt.Sprintf("## Project context (from %s)\nThese are the project's instructions for working in it.\n\n%s",
		path, capText(strings.TrimSpace(text), ContextCap)), nil
}
