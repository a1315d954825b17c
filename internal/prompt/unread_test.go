package prompt

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBuildSkipsUnreadableContextFile: a project context file that exists
// but cannot be read (a directory, a FIFO, no permission) never fails the
// build (which would stop a turn from starting): it is skipped with one
// line in the prompt and a warning naming it, and the search goes on to
// the next candidate.
func TestBuildSkipsUnreadableContextFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		files    map[string]string
		fifo     string // made a FIFO
		chmod    string // made unreadable (skipped as root)
		unread   []string
		loaded   string // the file whose text is in the prompt, if any
		wantText string
	}{
		{name: "AGENTS.md is a directory", files: map[string]string{"work/AGENTS.md/": ""},
			unread: []string{"AGENTS.md"}},
		{name: "AGENTS.md is a FIFO", fifo: "work/AGENTS.md", unread: []string{"AGENTS.md"}},
		{name: "TALARIA.md without permission", files: map[string]string{"work/TALARIA.md": "x"}, chmod: "work/TALARIA.md",
			unread: []string{"TALARIA.md"}},
		{name: "the next candidate is used", files: map[string]string{"work/AGENTS.md/": "", "work/CLAUDE.md": "Use tabs."},
			unread: []string{"AGENTS.md"}, loaded: "CLAUDE.md", wantText: "Use tabs."},
		{name: "a near file after an unreadable one", files: map[string]string{"work/.talaria.md/": "", "work/TALARIA.md": "Be brief."},
			unread: []string{".talaria.md"}, loaded: "TALARIA.md", wantText: "Be brief."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.chmod != "" && os.Geteuid() == 0 {
				t.Skip("root reads any file")
			}
			root := t.TempDir()
			writeFiles(t, root, map[string]string{"work/": "", "home/": ""})
			writeFiles(t, root, tt.files)
			if tt.fifo != "" {
				if err := syscall.Mkfifo(filepath.Join(root, filepath.FromSlash(tt.fifo)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.chmod != "" {
				p := filepath.Join(root, filepath.FromSlash(tt.chmod))
				if err := os.Chmod(p, 0); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.Chmod(p, 0o644) })
			}
			var logs bytes.Buffer
			type built struct {
				p   Prompt
				err error
			}
			done := make(chan built, 1)
			go func() {
				p, err := Build(Inputs{Home: filepath.Join(root, "home"), Workdir: filepath.Join(root, "work"), Now: fixedNow,
					Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				done <- built{p, err}
			}()
			var b built
			select {
			case b = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Build blocked")
			}
			if b.err != nil {
				t.Fatalf("Build = %v, want the unreadable file skipped", b.err)
			}
			if len(b.p.Unread) != len(tt.unread) {
				t.Fatalf("Unread = %+v, want %v", b.p.Unread, tt.unread)
			}
			text, _ := section(b.p, SectionContext)
			for i, name := range tt.unread {
				u := b.p.Unread[i]
				if filepath.Base(u.Path) != name || !errors.Is(u.Err, ErrUnreadable) {
					t.Errorf("Unread[%d] = %+v, want %s wrapping ErrUnreadable", i, u, name)
				}
				if !strings.Contains(text, "["+name+" was not loaded: it could not be read]") {
					t.Errorf("the prompt does not say %s was not loaded:\n%s", name, text)
				}
				if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), u.Path) {
					t.Errorf("no warning names %s:\n%s", u.Path, logs.String())
				}
			}
			if tt.loaded != "" && (!strings.Contains(text, tt.loaded) || !strings.Contains(text, tt.wantText)) {
				t.Errorf("context section does not load %s:\n%s", tt.loaded, text)
			}
			if tt.loaded == "" && strings.Contains(text, "## Project context") {
				t.Errorf("context section loads something:\n%s", text)
			}
		})
	}
}
