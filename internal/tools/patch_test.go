package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceIn(t *testing.T) {
	const src = "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	for _, tt := range []struct {
		name            string
		content         string
		old, repl       string
		all             bool
		want            string
		n               int
		match           string
		applied         bool
		wantErr         error
		errHas, errNone string
	}{
		{name: "unique", content: src, old: "func a() {\n\treturn 1", repl: "func a() {\n\treturn 2",
			want: "func a() {\n\treturn 2\n}\n\nfunc b() {\n\treturn 1\n}\n", n: 1},
		{name: "ambiguous", content: src, old: "\treturn 1\n", repl: "\treturn 3\n",
			wantErr: errPatchAmbiguous, errHas: "occurs 2 times (at lines 2, 6)"},
		{name: "replace all", content: src, old: "return 1", repl: "return 0", all: true,
			want: strings.ReplaceAll(src, "return 1", "return 0"), n: 2},
		{name: "missing, closest shown", content: src, old: "func c() {\n\treturn 1\n}", repl: "x",
			wantErr: errPatchNotFound, errHas: "     1|func a() {\n     2|\treturn 1\n     3|}"},
		{name: "missing, nothing alike", content: src, old: "zzzzzzzzzzzzzzzzzz", repl: "y",
			wantErr: errPatchNotFound, errNone: "closest"},
		{name: "indentation differs", content: "if x {\n    call()\n}\n", old: "if x {\n\tcall()\n}", repl: "if x {\n\tcall2()\n}",
			want: "if x {\n\tcall2()\n}\n", n: 1, match: matchTrimmed},
		{name: "inner spaces differ", content: "a  =   b + c\nnext\n", old: "a = b + c\n", repl: "a = b - c\n",
			want: "a = b - c\nnext\n", n: 1, match: matchWhitespace},
		{name: "crlf file", content: "one\r\ntwo\r\nthree\r\n", old: "two\nthree", repl: "2\r\n3",
			want: "one\r\n2\r\n3\r\n", n: 1, match: matchTrimmed},
		{name: "already applied", content: "x := 2\n", old: "x := 1", repl: "x := 2", want: "x := 2\n", applied: true},
		{name: "new holds old, applied", content: "run(x, y)\n", old: "run(x", repl: "run(x, y", want: "run(x, y)\n", applied: true},
		{name: "new holds old, not yet everywhere", content: "run(x, y)\nrun(x)\n", old: "run(x)", repl: "run(x) // ok", want: "run(x, y)\nrun(x) // ok\n", n: 1},
		{name: "deletion not found is not applied", content: "x\n", old: "y\n", repl: "", wantErr: errPatchNotFound},
		{name: "whitespace-only old never fuzzy", content: "a\n\nb\n", old: "  \n", repl: "z", wantErr: errPatchNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, n, match, applied, err := replaceIn(tt.content, tt.old, tt.repl, tt.all)
			if tt.wantErr != nil || tt.errHas != "" {
				if err == nil {
					t.Fatalf("no error; got %q", got)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("error %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.errHas) || tt.errNone != "" && strings.Contains(err.Error(), tt.errNone) {
					t.Errorf("error %q: want %q in it, not %q", err, tt.errHas, tt.errNone)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || n != tt.n || match != tt.match || applied != tt.applied {
				t.Errorf("got %q n=%d match=%q applied=%v, want %q n=%d match=%q applied=%v", got, n, match, applied, tt.want, tt.n, tt.match, tt.applied)
			}
		})
	}
}

func TestParseV4A(t *testing.T) {
	for _, tt := range []struct {
		name, patch, errHas string
		files               int
	}{
		{"update add delete", "*** Begin Patch\n*** Update File: a.go\n@@ func a\n-x\n+y\n*** Add File: b.txt\n+hi\n*** Delete File: c.txt\n*** End Patch", "", 3},
		{"no begin", "*** Update File: a\n-x\n+y\n*** End Patch", "starts with", 0},
		{"no end", "*** Begin Patch\n*** Update File: a\n-x\n+y", "ends with", 0},
		{"bad line", "*** Begin Patch\n*** Update File: a\n?x\n*** End Patch", "line 3: a hunk line starts with", 0},
		{"empty update", "*** Begin Patch\n*** Update File: a\n*** End Patch", "has no change", 0},
		{"twice", "*** Begin Patch\n*** Update File: a\n-x\n+y\n*** Update File: a\n-y\n+z\n*** End Patch", "appears twice", 0},
		{"move", "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch", "moving files is not supported", 0},
		{"nothing", "*** Begin Patch\n*** End Patch", "changes no file", 0},
		{"add without plus", "*** Begin Patch\n*** Add File: a\nhello\n*** End Patch", "starts with \"+\"", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files, err := parseV4A(tt.patch)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("error %v, want %q", err, tt.errHas)
				}
				return
			}
			if err != nil || len(files) != tt.files {
				t.Fatalf("%d files, %v", len(files), err)
			}
		})
	}
}

func TestApplyHunks(t *testing.T) {
	const src = "package p\n\nfunc a() int {\n\treturn 1\n}\n\nfunc b() int {\n\treturn 1\n}\n"
	for _, tt := range []struct {
		name    string
		hunks   []v4aHunk
		want    string
		applied bool
		errHas  string
	}{
		{"anchor picks the second", []v4aHunk{{anchor: "func b", old: []string{"\treturn 1"}, new: []string{"\treturn 2"}}},
			strings.Replace(src, "b() int {\n\treturn 1", "b() int {\n\treturn 2", 1), false, ""},
		{"in order", []v4aHunk{{old: []string{"\treturn 1"}, new: []string{"\treturn 10"}}, {old: []string{"\treturn 1"}, new: []string{"\treturn 20"}}},
			"package p\n\nfunc a() int {\n\treturn 10\n}\n\nfunc b() int {\n\treturn 20\n}\n", false, ""},
		{"append at end", []v4aHunk{{new: []string{"", "func c() {}"}}}, src + "\nfunc c() {}\n", false, ""},
		{"insert after anchor", []v4aHunk{{anchor: "package p", new: []string{"import \"fmt\""}}},
			"package p\nimport \"fmt\"\n\nfunc a() int {\n\treturn 1\n}\n\nfunc b() int {\n\treturn 1\n}\n", false, ""},
		{"already applied", []v4aHunk{{old: []string{"\treturn 0"}, new: []string{"\treturn 1"}}}, src, true, ""},
		{"missing", []v4aHunk{{old: []string{"func z() int {"}, new: []string{"x"}}}, "", false, "hunk 1: its lines"},
		{"missing anchor", []v4aHunk{{anchor: "func q", old: []string{"x"}, new: []string{"y"}}}, "", false, "anchor line \"func q\""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, applied, err := applyHunks(src, tt.hunks)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("error %v, want %q", err, tt.errHas)
				}
				return
			}
			if err != nil || got != tt.want || applied != tt.applied {
				t.Errorf("got %q applied=%v err=%v, want %q applied=%v", got, applied, err, tt.want, tt.applied)
			}
		})
	}
}

// TestPatchTool: both modes through the tool, on files: the result and
// its diff, a multi-file patch checked whole before any write, a repeat
// reported already applied, modes kept, and write_file's path rules.
func TestPatchTool(t *testing.T) {
	dir := t.TempDir()
	env := Env{Workdir: dir}
	a := writeTestFile(t, dir, "a.txt", "alpha\nbeta\ngamma\n")
	if err := os.Chmod(a, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runTool(t, Patch, env, `{"path":"a.txt","old_string":"beta","new_string":"BETA"}`)
	if err != nil {
		t.Fatal(err)
	}
	res := decode[patchResult](t, out)
	if len(res.Files) != 1 || res.Files[0].Action != "updated" || !strings.Contains(res.Diff, "-beta\n+BETA\n") {
		t.Errorf("result %s", out)
	}
	if data, _ := os.ReadFile(a); string(data) != "alpha\nBETA\ngamma\n" {
		t.Errorf("a.txt = %q", data)
	}
	if fi, _ := os.Stat(a); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", fi.Mode().Perm())
	}
	// The same patch again: the model repeating a patch that took effect.
	out, err = runTool(t, Patch, env, `{"path":"a.txt","old_string":"beta","new_string":"BETA"}`)
	if err != nil || decode[patchResult](t, out).Files[0].Action != "already applied" {
		t.Errorf("repeat: %s %v", out, err)
	}

	writeTestFile(t, dir, "old.txt", "bye\n")
	multi := mustJSON(t, map[string]string{"patch": "*** Begin Patch\n*** Update File: a.txt\n alpha\n-BETA\n+beta2\n*** Add File: sub/new.txt\n+hello\n+world\n*** Delete File: old.txt\n*** End Patch"})
	out, err = runTool(t, Patch, env, multi)
	if err != nil {
		t.Fatal(err)
	}
	res = decode[patchResult](t, out)
	if len(res.Files) != 3 || res.Files[1].Action != "added" || res.Files[2].Action != "deleted" {
		t.Errorf("multi: %s", out)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "sub/new.txt")); string(data) != "hello\nworld\n" {
		t.Errorf("new.txt = %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "old.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("old.txt still there: %v", err)
	}
	out, err = runTool(t, Patch, env, multi)
	if err != nil {
		t.Fatalf("the multi-file patch again: %v", err)
	}
	for _, f := range decode[patchResult](t, out).Files {
		if f.Action != "already applied" {
			t.Errorf("again: %s %s", f.Path, f.Action)
		}
	}

	// A bad hunk in the second file: the first is not written either.
	bad := mustJSON(t, map[string]string{"patch": "*** Begin Patch\n*** Update File: a.txt\n-beta2\n+beta3\n*** Update File: sub/new.txt\n-nothere\n+x\n*** End Patch"})
	if _, err := runTool(t, Patch, env, bad); err == nil || !strings.Contains(err.Error(), "hunk 1") {
		t.Errorf("bad hunk: %v", err)
	}
	if data, _ := os.ReadFile(a); string(data) != "alpha\nbeta2\ngamma\n" {
		t.Errorf("a.txt changed by a patch that failed: %q", data)
	}

	for _, tt := range []struct{ args, errHas string }{
		{`{"path":"/etc/hostname","old_string":"a","new_string":"b"}`, "outside the writable roots"},
		{`{"path":"a.txt","old_string":"","new_string":"b"}`, "is empty"},
		{`{"path":"a.txt","old_string":"x","new_string":"x"}`, "the same"},
		{`{"path":"missing.txt","old_string":"x","new_string":"y"}`, "not found"},
		{`{"patch":"*** Begin Patch\n*** End Patch","path":"a.txt"}`, "not both"},
		{`{"path":"a.txt","new_string":"y"}`, `missing required argument "old_string"`},
	} {
		if out, err := runTool(t, Patch, env, tt.args); err == nil || !strings.Contains(err.Error(), tt.errHas) {
			t.Errorf("%s: %s %v, want %q", tt.args, out, err, tt.errHas)
		}
	}
	bin := writeTestFile(t, dir, "bin.dat", "a\x00b")
	if _, err := runTool(t, Patch, env, mustJSON(t, map[string]string{"path": bin, "old_string": "a", "new_string": "c"})); !errors.Is(err, ErrBinaryFile) {
		t.Errorf("binary: %v", err)
	}
}
