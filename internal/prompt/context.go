package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/talaria-agent/talaria/internal/injection"
)

// ContextCap caps the project context file, in characters.
const ContextCap = 20000

// Project context files. NearContextFiles are searched from the working
// directory upward to the git root (the working directory alone when it is
// in no git repository), nearest first, the first name winning within one
// directory; WorkdirContextFiles only in the working directory, after
// them, in this order.
var (
	NearContextFiles    = []string{".talaria.md", "TALARIA.md"}
	WorkdirContextFiles = []string{"AGENTS.md", "CLAUDE.md", ".cursorrules"}
)

// Unread is a prompt file (under the home or a project context file) that
// exists but could not be read: it is left out of the prompt, said in one
// line there and warned about. Err wraps ErrUnreadable and the cause.
type Unread struct {
	Path string
	Err  error
}

// findContextFile returns the project context file for workdir, its
// text and the candidates it skipped as unreadable (in search order);
// path is "" when there is none. An empty (blank) file counts as absent
// and the search goes on. NearContextFiles are looked for from
// workdir up to its git root; without a git root, in workdir alone, so a
// file planted in /tmp or /home never reaches the prompt. A candidate that
// exists but cannot be read (a directory, a FIFO, no permission) is
// skipped like a blank one.
func findContextFile(workdir string) (path, text string, unread []Unread, err error) {
	if workdir == "" {
		return "", "", nil, nil
	}
	start, err := filepath.Abs(workdir)
	if err != nil {
		return "", "", nil, fmt.Errorf("project context: resolve %q: %w", workdir, err)
	}
	for _, dir := range searchDirs(start) {
		if path, text = firstFile(dir, NearContextFiles, &unread); path != "" {
			return path, text, unread, nil
		}
	}
	path, text = firstFile(start, WorkdirContextFiles, &unread)
	return path, text, unread, nil
}

// searchDirs lists the directories searched for NearContextFiles: start
// and its parents up to the nearest git root, nearest first. Without a git
// root (or when a parent cannot be checked) it is start alone.
func searchDirs(start string) []string {
	var dirs []string
	for dir := start; ; {
		dirs = append(dirs, dir)
		isRoot, err := isGitRoot(dir)
		if err != nil {
			return []string{start}
		}
		if isRoot {
			return dirs
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return []string{start}
		}
		dir = parent
	}
}

// firstFile returns the first of names in dir that exists, can be read
// and is not blank; those that cannot be read are added to unread.
func firstFile(dir string, names []string, unread *[]Unread) (path, text string) {
	for _, name := range names {
		p := filepath.Join(dir, name)
		t, ok, err := readOptional(p)
		if err != nil {
			*unread = append(*unread, Unread{Path: p, Err: fmt.Errorf("project context: %w", err)})
			continue
		}
		if ok && strings.TrimSpace(t) != "" {
			return p, t
		}
	}
	return "", ""
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

// contextSection renders the project context file. A file that looks
// like a prompt injection is left out, and the section says so in one line
// instead; the refusal is returned for the caller to warn about. A
// candidate that could not be read is said in one line too, and returned
// for the caller to warn about.
func contextSection(workdir string) (string, []Refusal, []Unread, error) {
	path, text, unread, err := findContextFile(workdir)
	if err != nil {
		return "", nil, nil, err
	}
	var notes []string
	for _, u := range unread {
		notes = append(notes, unreadNote(filepath.Base(u.Path)))
	}
	if path == "" {
		return strings.Join(notes, "\n"), nil, unread, nil
	}
	if findings := injection.Scan(text); len(findings) > 0 {
		notes = append(notes, refusedNote(filepath.Base(path), findings))
		return strings.Join(notes, "\n"), []Refusal{{Path: path, Findings: findings}}, unread, nil
	}
	section := fmt.Sprintf("## Project context (from %s)\nThese are the project's instructions for working in it.\n\n%s",
		path, capText(strings.TrimSpace(text), ContextCap))
	if len(notes) > 0 {
		section = strings.Join(notes, "\n") + "\n\n" + section
	}
	return section, nil, unread, nil
}

// unreadNote is the line that stands in the prompt for a context file
// that could not be read.
func unreadNote(name string) string {
	return fmt.Sprintf("[%s was not loaded: it could not be read]", name)
}

// refusedNote is the line that stands in the prompt for a refused file.
func refusedNote(name string, findings []injection.Finding) string {
	return fmt.Sprintf("[%s was not loaded: it looks like a prompt injection (%s)]", name, injection.Summary(findings))
}
