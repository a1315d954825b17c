package prompt

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBuildSkipsUnreadableHomeFile: a home prompt file that exists but
// cannot be read (SOUL.md, MEMORY.md, USER.md, the skills directory or a
// SKILL.md that is a directory, a FIFO or has no permission) never fails
// the build, which would stop a session's first turn from starting: it is
// left out with one line in its section and a warning naming it, and the
// rest of the prompt is built as usual (the default identity for SOUL.md,
// the other memory file, the other skills).
func TestBuildSkipsUnreadableHomeFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   map[string]string
		fifo    string // made a FIFO
		chmod   string // made unreadable (skipped as root)
		unread  string // the file listed in Unread, relative to home
		section string // the section that says so
		note    string // the name in that section's line
		has     []string
	}{
		{name: "SOUL.md is a directory", files: map[string]string{"home/SOUL.md/": ""},
			unread: "SOUL.md", section: SectionIdentity, note: "SOUL.md", has: []string{DefaultIdentity}},
		{name: "SOUL.md is a FIFO", fifo: "home/SOUL.md",
			unread: "SOUL.md", section: SectionIdentity, note: "SOUL.md", has: []string{DefaultIdentity}},
		{name: "SOUL.md without permission", files: map[string]string{"home/SOUL.md": "I am x."}, chmod: "home/SOUL.md",
			unread: "SOUL.md", section: SectionIdentity, note: "SOUL.md", has: []string{DefaultIdentity}},
		{name: "MEMORY.md is a directory", files: map[string]string{"home/memories/MEMORY.md/": "", "home/memories/USER.md": "Likes tea."},
			unread: "memories/MEMORY.md", section: SectionMemory, note: "memories/MEMORY.md", has: []string{"## About the user", "- Likes tea."}},
		{name: "USER.md is a FIFO", files: map[string]string{"home/memories/MEMORY.md": "Repo uses make."}, fifo: "home/memories/USER.md",
			unread: "memories/USER.md", section: SectionMemory, note: "memories/USER.md", has: []string{"## Memory (your notes)", "- Repo uses make."}},
		{name: "MEMORY.md without permission", files: map[string]string{"home/memories/MEMORY.md": "x"}, chmod: "home/memories/MEMORY.md",
			unread: "memories/MEMORY.md", section: SectionMemory, note: "memories/MEMORY.md"},
		{name: "a SKILL.md is a directory", files: map[string]string{"home/skills/bad/SKILL.md/": "", "home/skills/good/SKILL.md": "Deploys the app."},
			unread: "skills/bad/SKILL.md", section: SectionSkills, note: "skills/bad/SKILL.md", has: []string{"## Skills", "- good: Deploys the app."}},
		{name: "skills is a file", files: map[string]string{"home/skills": "not a directory"},
			unread: "skills", section: SectionSkills, note: "skills"},
		{name: "skills without permission", files: map[string]string{"home/skills/x/SKILL.md": "X."}, chmod: "home/skills",
			unread: "skills", section: SectionSkills, note: "skills"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.chmod != "" && os.Geteuid() == 0 {
				t.Skip("root reads any file")
			}
			root := t.TempDir()
			home := filepath.Join(root, "home")
			writeFiles(t, root, map[string]string{"work/": "", "home/memories/": ""})
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
				t.Cleanup(func() { os.Chmod(p, 0o755) })
			}
			var logs bytes.Buffer
			type built struct {
				p   Prompt
				err error
			}
			done := make(chan built, 1)
			go func() {
				p, err := Build(Inputs{Home: home, Workdir: filepath.Join(root, "work"), Now: fixedNow,
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
			want := filepath.Join(home, filepath.FromSlash(tt.unread))
			if len(b.p.Unread) != 1 || b.p.Unread[0].Path != want || !errors.Is(b.p.Unread[0].Err, ErrUnreadable) {
				t.Fatalf("Unread = %+v, want %s wrapping ErrUnreadable", b.p.Unread, want)
			}
			if tt.chmod != "" && !errors.Is(b.p.Unread[0].Err, fs.ErrPermission) {
				t.Errorf("Unread error = %v, want it to wrap fs.ErrPermission", b.p.Unread[0].Err)
			}
			text, _ := section(b.p, tt.section)
			line := "[" + tt.note + " was not loaded: it could not be read]"
			if !strings.Contains(text, line) {
				t.Errorf("the %s section does not say %q:\n%s", tt.section, line, text)
			}
			if n := strings.Count(b.p.Text, "was not loaded"); n != 1 {
				t.Errorf("the prompt says %d times that a file was not loaded, want once:\n%s", n, b.p.Text)
			}
			for _, s := range tt.has {
				if !strings.Contains(text, s) {
					t.Errorf("the %s section lacks %q:\n%s", tt.section, s, text)
				}
			}
			if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), want) {
				t.Errorf("no warning names %s:\n%s", want, logs.String())
			}
		})
	}
}
