package tools

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestGitStage: of what a command did at the top of a staged git
// directory, only git's data files come back, and only as files of their
// own: a replaced index and a new MERGE_HEAD come back, a removed
// ORIG_HEAD is removed (not one the repository replaced meanwhile), a
// commondir, a symbolic link and a second name of another file do not;
// the staging directory goes, and one left by a process that died is
// cleared by the next.
func TestGitStage(t *testing.T) {
	t.Parallel()
	git := filepath.Join(t.TempDir(), ".git")
	write := func(p, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return "<none>"
		}
		return string(b)
	}
	for n, text := range map[string]string{"index": "old index", "HEAD": "ref: refs/heads/main\n", "ORIG_HEAD": "abc\n",
		"FETCH_HEAD": "def\n", "config": "[core]\n", "description": "x"} {
		write(filepath.Join(git, n), text)
	}
	write(filepath.Join(git, "refs", "heads", "main"), "abc\n")
	// A staging left by a process that died.
	stale := filepath.Join(git, stageDirName, "dead")
	write(filepath.Join(stale, "commondir"), "../x")
	write(stale+".lock", "")

	s, err := stageGit(git)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a stale staging directory was not cleared")
	}
	shared, kept := s.top()
	if !slices.Equal(shared, []string{filepath.Join(git, "refs")}) {
		t.Errorf("shared = %v", shared)
	}
	for _, n := range []string{"config", "description"} {
		if !slices.Contains(kept, filepath.Join(git, n)) {
			t.Errorf("%s is not kept read-only: %v", n, kept)
		}
	}
	if read(filepath.Join(s.dir, "HEAD")) != "ref: refs/heads/main\n" {
		t.Fatal("HEAD is not in the staging directory")
	}

	// What a command does there.
	write(filepath.Join(s.dir, "index.new"), "new index")
	if err := os.Rename(filepath.Join(s.dir, "index.new"), filepath.Join(s.dir, "index")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(s.dir, "MERGE_HEAD"), "123\n")
	if err := os.Remove(filepath.Join(s.dir, "ORIG_HEAD")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.dir, "FETCH_HEAD")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(git, "FETCH_HEAD.new"), "the owner's\n") // replaced meanwhile
	if err := os.Rename(filepath.Join(git, "FETCH_HEAD.new"), filepath.Join(git, "FETCH_HEAD")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(s.dir, "commondir"), "../evil\n")
	if err := os.Remove(filepath.Join(s.dir, "HEAD")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(s.dir, "HEAD")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(s.dir, "other"), "a second name")
	if err := os.Link(filepath.Join(s.dir, "other"), filepath.Join(s.dir, "COMMIT_EDITMSG")); err != nil {
		t.Fatal(err)
	}

	// A reflog directory that is a link (left by an older version): nothing
	// comes back through it, and it goes.
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(git, "logs")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(s.dir, "logs", "HEAD"), "a reflog\n")

	failed := s.finish()
	if left, _ := os.ReadDir(elsewhere); len(left) != 0 {
		t.Errorf("a reflog came back through a link: %v", left)
	}
	for p, want := range map[string]string{
		"index": "new index", "MERGE_HEAD": "123\n", "ORIG_HEAD": "<none>", "FETCH_HEAD": "the owner's\n",
		"commondir": "<none>", "HEAD": "ref: refs/heads/main\n", "COMMIT_EDITMSG": "<none>",
	} {
		if got := read(filepath.Join(git, p)); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if info, err := os.Lstat(filepath.Join(git, "HEAD")); err != nil || !info.Mode().IsRegular() {
		t.Errorf("HEAD is not the repository's file: %v %v", info, err)
	}
	if len(failed) != 3 {
		t.Errorf("not kept: %q, want HEAD, COMMIT_EDITMSG and the logs link removed", failed)
	}
	if left, _ := os.ReadDir(filepath.Join(git, stageDirName)); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
