package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestListDirectory: a directory's entries, directories first, with types
// and sizes; dot names only when asked; what tools never read is withheld
// and counted; a file, a path outside the read roots and bad arguments are
// refused in one line.
func TestListDirectory(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	work, home := filepath.Join(base, "work"), filepath.Join(base, "home")
	for _, d := range []string{filepath.Join(work, "src"), filepath.Join(work, ".git"), home, filepath.Join(base, "elsewhere")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, work, "b.txt", "12345")
	writeTestFile(t, work, "a.md", "")
	writeTestFile(t, work, ".env.example", "X=1")
	if err := os.Symlink("b.txt", filepath.Join(work, "link")); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, home, "config.yaml", "secret")
	writeTestFile(t, home, "talaria.db", "db")
	writeTestFile(t, home, "notes.md", "n")
	tool, ok := toolNamed("list_directory")
	if !ok {
		t.Fatal("list_directory is not a built-in tool")
	}
	env := Env{Workdir: work, Policy: Policy{Home: home}}

	out, err := runTool(t, tool, env, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	res := decode[listDirectoryResult](t, out)
	want := []dirEntry{{Name: "src", Type: "dir"}, {Name: "a.md", Type: "file"}, {Name: "b.txt", Type: "file", Size: 5}, {Name: "link", Type: "symlink"}}
	if !slices.Equal(res.Entries, want) || res.Total != 6 || res.Hidden != 2 || res.Path != work || res.Truncated {
		t.Errorf("list of the working directory: %+v", res)
	}
	out, _ = runTool(t, tool, env, `{"path":".","hidden":"true"}`)
	if res := decode[listDirectoryResult](t, out); len(res.Entries) != 6 || res.Entries[0].Name != ".git" || res.Hidden != 0 {
		t.Errorf("with hidden: %+v", res)
	}
	out, _ = runTool(t, tool, env, `{"path":"`+home+`"}`)
	if res := decode[listDirectoryResult](t, out); len(res.Entries) != 1 || res.Entries[0].Name != "notes.md" || res.Withheld != 2 {
		t.Errorf("$TALARIA_HOME: %+v", res)
	}
	if strings.Contains(out, "config.yaml") || strings.Contains(out, "talaria.db") {
		t.Errorf("a secret's name is listed: %s", out)
	}

	roots := Env{Workdir: work, Policy: Policy{Home: home, ReadRoots: []string{work}}}
	for _, tt := range []struct {
		env        Env
		args, want string
		kind       error
	}{
		{env, `{"path":"b.txt"}`, "is not a directory", nil},
		{env, `{"path":"nowhere"}`, "no such file", nil},
		{roots, `{"path":"` + filepath.Join(base, "elsewhere") + `"}`, "outside the readable roots", ErrOutsideRoots},
		{env, `{"path":["src"]}`, `"path" must be a string`, ErrInvalidArguments},
		{env, `{"dir":"src"}`, `unknown argument "dir"; the arguments are "path" and "hidden"`, ErrInvalidArguments},
	} {
		_, err := runTool(t, tool, tt.env, tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") || tt.kind != nil && !errors.Is(err, tt.kind) {
			t.Errorf("%s: %v, want one line holding %q", tt.args, err, tt.want)
		}
	}
}

// TestListDirectoryBounds: a directory of more entries than are shown
// lists the first by name and says it was cut.
func TestListDirectoryBounds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range listDirectoryShown + 20 {
		writeTestFile(t, dir, fmt.Sprintf("f%04d", i), "")
	}
	tool, _ := toolNamed("list_directory")
	out, err := runTool(t, tool, Env{Workdir: dir}, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	res := decode[listDirectoryResult](t, out)
	if len(res.Entries) != listDirectoryShown || !res.Truncated || res.Total != listDirectoryShown+20 || res.Entries[0].Name != "f0000" {
		t.Errorf("%d entries, truncated %v, total %d, first %+v", len(res.Entries), res.Truncated, res.Total, res.Entries[0])
	}
}

// TestListDirectoryEverywhere: declared in its file alone, the tool is a
// quick, idempotent built-in of the file toolset that talaria tools lists,
// whose guidance the prompt gives when it is offered, and that an
// execute_code program may call.
func TestListDirectoryEverywhere(t *testing.T) {
	t.Parallel()
	tool, ok := toolNamed("list_directory")
	if !ok || !IsQuick(tool) || !tool.Idempotent() || ToolsetOf("list_directory") != "file" || !slices.Contains(ExpandToolsets([]string{"file"}), "list_directory") {
		t.Fatalf("list_directory: built in %v, toolset %q", ok, ToolsetOf("list_directory"))
	}
	if g := Guidance([]string{"list_directory"}); len(g) != 1 || !strings.Contains(g[0], "list_directory") {
		t.Errorf("guidance %q", g)
	}
	withCode, err := WithCodeTools(Builtins(Services{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range withCode {
		if code, ok := tl.(ExecuteCodeTool); ok && !slices.Contains(code.Tools.Names(), "list_directory") {
			t.Errorf("execute_code programs may call %v, not list_directory", code.Tools.Names())
		}
	}
	// And a program does call it, through talaria_tools.
	dir := t.TempDir()
	writeTestFile(t, dir, "seen.txt", "x")
	reg, err := NewRegistry(withCode...)
	if err != nil {
		t.Fatal(err)
	}
	code := `import talaria_tools
print(talaria_tools.list_directory()["entries"][0]["name"])`
	res := reg.Call(context.Background(), Env{Workdir: dir, SessionID: "s", TurnID: "t"}, Call{ID: "c1", Name: ExecuteCodeName, Arguments: mustJSON(t, map[string]any{"code": code})})
	if res.IsError || !strings.Contains(res.Content, "seen.txt") {
		t.Errorf("execute_code calling list_directory: %+v", res)
	}
}

// toolNamed is the built-in tool of that name.
func toolNamed(name string) (Tool, bool) {
	for _, t := range Builtins(Services{}) {
		if t.Name() == name {
			return t, true
		}
	}
	return nil, false
}
