package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	writeTestFile(t, dir, "existing.txt", "old content\n")
	if err := os.Chmod(filepath.Join(dir, "existing.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		env      Env
		args     string
		wantPath string
		content  string
		mode     os.FileMode
		wantErr  error
		errHas   string
	}{
		{name: "relative new file", env: Env{Workdir: dir}, args: `{"path":"new.txt","content":"hello\n"}`,
			wantPath: filepath.Join(dir, "new.txt"), content: "hello\n", mode: 0o644},
		{name: "absolute path under a write root", env: Env{Workdir: dir, Policy: Policy{WriteRoots: []string{other}}},
			args:     mustJSON(t, map[string]string{"path": filepath.Join(other, "abs.txt"), "content": "x"}),
			wantPath: filepath.Join(other, "abs.txt"), content: "x", mode: 0o644},
		{name: "creates parent directories", env: Env{Workdir: dir}, args: `{"path":"a/b/c/deep.txt","content":"deep"}`,
			wantPath: filepath.Join(dir, "a/b/c/deep.txt"), content: "deep", mode: 0o644},
		{name: "overwrite keeps permissions", env: Env{Workdir: dir}, args: `{"path":"existing.txt","content":"new"}`,
			wantPath: filepath.Join(dir, "existing.txt"), content: "new", mode: 0o600},
		{name: "empty content allowed", env: Env{Workdir: dir}, args: `{"path":"empty.txt","content":""}`,
			wantPath: filepath.Join(dir, "empty.txt"), content: "", mode: 0o644},
		{name: "unicode bytes counted", env: Env{Workdir: dir}, args: `{"path":"u.txt","content":"héllo ✓"}`,
			wantPath: filepath.Join(dir, "u.txt"), content: "héllo ✓", mode: 0o644},

		{name: "missing content", env: Env{Workdir: dir}, args: `{"path":"x.txt"}`, wantErr: ErrInvalidArguments, errHas: `"content"`},
		{name: "missing path", env: Env{Workdir: dir}, args: `{"content":"x"}`, wantErr: ErrInvalidArguments, errHas: `"path"`},
		{name: "content wrong type", env: Env{Workdir: dir}, args: `{"path":"x.txt","content":{"a":1}}`, wantErr: ErrInvalidArguments, errHas: "must be a string"},
		{name: "malformed JSON", env: Env{Workdir: dir}, args: `{"path":"x.txt",`, wantErr: ErrInvalidArguments},
		{name: "target is a directory", env: Env{Workdir: dir}, args: `{"path":"adir","content":"x"}`, errHas: "is a directory"},
		{name: "parent is a file", env: Env{Workdir: dir}, args: `{"path":"existing.txt/child","content":"x"}`, errHas: filepath.Join(dir, "existing.txt/child")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runTool(t, WriteFile, tc.env, tc.args)
			if expectError(t, out, err, tc.wantErr, tc.errHas) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := decode[writeFileResult](t, out)
			if r.Path != tc.wantPath || r.BytesWritten != len(tc.content) {
				t.Errorf("result %+v, want path %s bytes %d", r, tc.wantPath, len(tc.content))
			}
			data, err := os.ReadFile(tc.wantPath)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != tc.content {
				t.Errorf("file holds %q, want %q", data, tc.content)
			}
			info, err := os.Stat(tc.wantPath)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != tc.mode {
				t.Errorf("mode %v, want %v", info.Mode().Perm(), tc.mode)
			}
		})
	}

	// No temporary files are left behind.
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestWriteFileThroughSymlinkKeepsLink(t *testing.T) {
	dir := t.TempDir()
	target := writeTestFile(t, dir, "target.txt", "old")
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := runTool(t, WriteFile, Env{Workdir: dir}, `{"path":"link.txt","content":"new"}`); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link replaced: %v %v", fi, err)
	}
	if data, _ := os.ReadFile(target); string(data) != "new" {
		t.Errorf("target holds %q", data)
	}
}

func TestWriteThenRead(t *testing.T) {
	dir := t.TempDir()
	env := Env{Workdir: dir}
	if _, err := runTool(t, WriteFile, env, `{"path":"src/main.go","content":"package main\n\nfunc main() {}\n"}`); err != nil {
		t.Fatal(err)
	}
	out, err := runTool(t, ReadFile, env, `{"path":"src/main.go","offset":3}`)
	if err != nil {
		t.Fatal(err)
	}
	if r := decode[readFileResult](t, out); r.Content != "     3|func main() {}" || r.TotalLines != 3 {
		t.Errorf("got %+v", r)
	}
}

func TestWriteFileNotIdempotent(t *testing.T) {
	if (WriteFile).Idempotent() {
		t.Error("write_file must report not idempotent")
	}
}
