package tools

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// searchTree is a small project: ignored, binary, nested and secret files.
func searchTree(t *testing.T) string {
	dir := t.TempDir()
	for name, content := range map[string]string{
		".gitignore":         "build/\n*.log\n!keep.log\n",
		"main.go":            "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
		"lib/util.go":        "package lib\n\n// Hello says hello.\nfunc Hello() string { return \"hello\" }\n",
		"lib/.gitignore":     "generated.go\n",
		"lib/generated.go":   "package lib // hello generated\n",
		"lib/deep/x_test.go": "package deep\n// HELLO in caps\n",
		"build/out.go":       "hello from build\n",
		"debug.log":          "hello log\n",
		"keep.log":           "hello kept\n",
		"image.png":          "hello\x00\x01binary",
		".git/config":        "hello git\n",
		".env":               "TOKEN=hello-secret\n",
	} {
		writeTestFile(t, dir, name, content)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "etc-link")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSearchFiles(t *testing.T) {
	dir := searchTree(t)
	env := Env{Workdir: dir, Policy: Policy{SecretFiles: []string{filepath.Join(dir, ".env")}}}
	for _, tt := range []struct {
		name, args string
		want       []string // lines of results, in order
		truncated  bool
		next       int
		errHas     string
	}{
		{name: "content, ignores honoured", args: `{"pattern":"hello"}`,
			want: []string{`keep.log:1:hello kept`, `lib/util.go:3:// Hello says hello.`, `lib/util.go:4:func Hello() string { return "hello" }`, `main.go:4:	println("hello")`}},
		{name: "ignore case", args: `{"pattern":"hello","ignore_case":true,"file_glob":"*.go"}`,
			want: []string{`lib/deep/x_test.go:2:// HELLO in caps`, `lib/util.go:3:// Hello says hello.`, `lib/util.go:4:func Hello() string { return "hello" }`, `main.go:4:	println("hello")`}},
		{name: "context", args: `{"pattern":"println","context":1}`,
			want: []string{`main.go-3-func main() {`, `main.go:4:	println("hello")`, `main.go-5-}`}},
		{name: "limit and offset", args: `{"pattern":"hello","limit":1,"offset":1}`,
			want: []string{`lib/util.go:3:// Hello says hello.`}, truncated: true, next: 2},
		{name: "one file", args: `{"pattern":"^package","path":"lib/util.go"}`, want: []string{`util.go:1:package lib`}},
		{name: "anchored per line", args: `{"pattern":"^func main"}`, want: []string{`main.go:3:func main() {`}},
		{name: "no match", args: `{"pattern":"absent-text"}`, want: []string{"(no matches)"}},
		{name: "files by name", args: `{"pattern":"*.go","target":"files"}`, want: []string{"lib/deep/x_test.go", "lib/util.go", "main.go"}},
		{name: "files by path", args: `{"pattern":"lib/**/*_test.go","target":"files"}`, want: []string{"lib/deep/x_test.go"}},
		{name: "bad regexp", args: `{"pattern":"(a"}`, errHas: "not an RE2 regular expression"},
		{name: "lookaround refused", args: `{"pattern":"a(?=b)"}`, errHas: "not an RE2 regular expression"},
		{name: "bad glob", args: `{"pattern":"x","file_glob":"[a"}`, errHas: "not a valid glob"},
		{name: "bad target", args: `{"pattern":"x","target":"lines"}`, errHas: `"target" must be`},
		{name: "empty pattern", args: `{"pattern":""}`, errHas: "must not be empty"},
		{name: "missing path", args: `{"pattern":"x","path":"nowhere"}`, errHas: "nowhere"},
		{name: "secret path refused", args: `{"pattern":"x","path":".env"}`, errHas: ".env"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runTool(t, SearchFiles, env, tt.args)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("%s %v, want an error with %q", out, err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := decode[searchResult](t, out)
			if got := strings.Split(r.Results, "\n"); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("results:\n%s\nwant:\n%s", r.Results, strings.Join(tt.want, "\n"))
			}
			if r.Truncated != tt.truncated || r.NextOffset != tt.next {
				t.Errorf("truncated %v next %d, want %v %d", r.Truncated, r.NextOffset, tt.truncated, tt.next)
			}
		})
	}
}

// TestSearchFilesOutputCap: many matches stop at the output cap, with the
// offset to go on from.
func TestSearchFilesOutputCap(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, dir, "big.txt", strings.Repeat("match "+strings.Repeat("x", 90)+"\n", 400))
	out, err := runTool(t, SearchFiles, Env{Workdir: dir, MaxOutputChars: 5000}, `{"pattern":"match","limit":500}`)
	if err != nil {
		t.Fatal(err)
	}
	r := decode[searchResult](t, out)
	if !r.Truncated || r.NextOffset != r.Count || len(r.Results) > 5000 || r.Count < 10 {
		t.Errorf("count %d, %d chars, truncated %v, next %d", r.Count, len(r.Results), r.Truncated, r.NextOffset)
	}
}

// BenchmarkSearchFiles compares search_files with grep -rn on a tree of
// 100,000 small files (one in 1,000 matching), in the same run.
// go test -run '^$' -bench SearchFiles -benchtime 5x ./internal/tools
func BenchmarkSearchFiles(b *testing.B) {
	dir := b.TempDir()
	for i := range 100_000 {
		body := fmt.Sprintf("package p%d\n\nfunc f%d() int { return %d }\n", i, i, i)
		if i%1000 == 0 {
			body += "// NEEDLE here\n"
		}
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i/1000), fmt.Sprintf("f%05d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	env := Env{Workdir: dir}
	b.Run("search_files", func(b *testing.B) {
		for b.Loop() {
			out, err := SearchFiles.Run(b.Context(), env, []byte(`{"pattern":"NEEDLE","limit":500}`))
			if err != nil || decode[searchResult](b, out).Count != 100 {
				b.Fatalf("%v %s", err, out[:min(len(out), 200)])
			}
		}
	})
	b.Run("grep-rn", func(b *testing.B) {
		for b.Loop() {
			out, err := exec.Command("grep", "-rn", "NEEDLE", dir).Output()
			if err != nil || strings.Count(string(out), "\n") != 100 {
				b.Fatalf("%v", err)
			}
		}
	})
}
