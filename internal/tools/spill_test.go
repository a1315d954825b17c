package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTerminalKeepsLongOutputInFull: an output above the cap reaches the
// model as head and tail naming a file in the session's directory (0600 in
// a 0700 directory) that holds all of it, which read_file may read even
// when read roots exclude it; a short output, no output directory or no
// session writes no file.
func TestTerminalKeepsLongOutputInFull(t *testing.T) {
	work, outputs, other := t.TempDir(), filepath.Join(t.TempDir(), "outputs"), t.TempDir()
	cases := []struct {
		name      string
		env       Env
		command   string
		wantBytes int  // length of the full output
		wantFile  bool // a file keeps it
	}{
		{"long output is kept", Env{Workdir: work, MaxOutputChars: 1000, OutputDir: outputs, SessionID: "s1"}, "head -c 1000000 /dev/zero | tr '\\0' a", 1_000_000, true},
		{"output at the cap is not", Env{Workdir: work, MaxOutputChars: 1000, OutputDir: outputs, SessionID: "s1"}, "head -c 1000 /dev/zero | tr '\\0' b", 1000, false},
		{"no output directory, no file", Env{Workdir: work, MaxOutputChars: 1000, SessionID: "s1"}, "head -c 5000 /dev/zero | tr '\\0' c", 5000, false},
		{"no session, no file", Env{Workdir: work, MaxOutputChars: 1000, OutputDir: outputs}, "head -c 5000 /dev/zero | tr '\\0' c", 5000, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := runTool(t, Terminal, c.env, mustJSON(t, map[string]string{"command": c.command}))
			if err != nil {
				t.Fatal(err)
			}
			r := decode[terminalResult](t, out)
			if len(r.Output) > c.env.MaxOutputChars+300 {
				t.Fatalf("the model gets %d bytes, above the cap of %d", len(r.Output), c.env.MaxOutputChars)
			}
			if !c.wantFile {
				if r.FullOutput != "" {
					t.Fatalf("a file was written: %s", r.FullOutput)
				}
				return
			}
			if !strings.Contains(r.Output, r.FullOutput) || !strings.Contains(r.Output, "read it with read_file") {
				t.Fatalf("the summary does not say where the rest is:\n%s", r.Output)
			}
			if filepath.Dir(r.FullOutput) != filepath.Join(outputs, "s1") {
				t.Fatalf("kept in %s, not in the session's directory", r.FullOutput)
			}
			for path, mode := range map[string]os.FileMode{r.FullOutput: 0o600, filepath.Dir(r.FullOutput): 0o700 | os.ModeDir, outputs: 0o700 | os.ModeDir} {
				if info, err := os.Lstat(path); err != nil || info.Mode() != mode {
					t.Fatalf("%s: mode %v (%v), want %v", path, info.Mode(), err, mode)
				}
			}
			data, err := os.ReadFile(r.FullOutput)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) != c.wantBytes || strings.Trim(string(data), "a") != "" {
				t.Fatalf("the file holds %d bytes, want %d", len(data), c.wantBytes)
			}
			env := Env{Workdir: work, OutputDir: outputs, SessionID: "s1", Policy: Policy{ReadRoots: []string{other}}}
			got, err := runTool(t, ReadFile, env, mustJSON(t, map[string]any{"path": r.FullOutput, "limit": 1}))
			if err != nil || !strings.Contains(got, "aaaa") {
				t.Fatalf("read_file of the kept output under read roots: %v\n%.300s", err, got)
			}
		})
	}
}

// TestTerminalControlBytesStayValidJSON: an output of control bytes is
// cut to the cap once escaped (six characters a byte), kept whole once,
// and the result is valid JSON within the cap; the registry does not cut
// or keep it again.
func TestTerminalControlBytesStayValidJSON(t *testing.T) {
	work, outputs := t.TempDir(), filepath.Join(t.TempDir(), "outputs")
	for _, size := range []int{900, 200_000} { // within the cap in bytes, and far above
		r, err := NewRegistry(Terminal)
		if err != nil {
			t.Fatal(err)
		}
		env := Env{Workdir: work, MaxOutputChars: 1000, OutputDir: outputs, SessionID: "ctl"}
		cmd := "head -c " + itoa(size) + " /dev/zero | tr '\\0' '\\001'"
		res := r.Call(context.Background(), env, Call{ID: "c", Name: "terminal", Arguments: mustJSON(t, map[string]string{"command": cmd})})
		if res.IsError {
			t.Fatal(res.Content)
		}
		out := decode[terminalResult](t, res.Content)
		if n := len(res.Content); n > 1000+400 {
			t.Fatalf("size %d: the model gets %d characters", size, n)
		}
		if out.FullOutput == "" {
			t.Fatalf("size %d: the whole output is not kept:\n%s", size, res.Content)
		}
		data, err := os.ReadFile(out.FullOutput)
		if err != nil || len(data) != size {
			t.Fatalf("size %d: kept %d bytes (%v)", size, len(data), err)
		}
		files, _ := filepath.Glob(filepath.Join(outputs, "ctl", "output-*.txt"))
		if len(files) != 1 {
			t.Fatalf("size %d: %d files kept, want 1", size, len(files))
		}
		os.Remove(files[0])
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestSpillWriterBoundsTheFile(t *testing.T) {
	w := newSpillWriter(spillTarget{base: t.TempDir(), session: "s", quota: DefaultOutputQuota}, 10)
	w.max = 3 << 20
	chunk := make([]byte, 1<<20)
	for range 5 {
		if n, err := w.Write(chunk); n != len(chunk) || err != nil {
			t.Fatalf("write: %d, %v", n, err)
		}
	}
	note := w.close(false)
	info, err := os.Stat(w.path())
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() != w.max || !strings.Contains(note, "the first") {
		t.Fatalf("file of %d bytes, note %q", info.Size(), note)
	}
}

// TestRegistryBoundsEveryResult: a tool that returns far more than the cap
// (one that does not bound its own output) reaches the model as head and
// tail within the cap, the whole kept in the session's directory; a JSON
// result stays valid JSON with its keys, even full of control bytes; a
// result within twice the cap is left alone.
func TestRegistryBoundsEveryResult(t *testing.T) {
	outputs := filepath.Join(t.TempDir(), "outputs")
	ctl := strings.Repeat("\x01\x02\"\\<", 50_000)
	cases := []struct {
		name     string
		result   string
		dir      string
		wantFile bool
		wantJSON bool
	}{
		{"within twice the cap", strings.Repeat("z", 2000), outputs, false, false},
		{"far above, kept", strings.Repeat("z", 1<<20), outputs, true, false},
		{"far above, no directory", strings.Repeat("z", 1<<20), "", false, false},
		{"JSON with a long string", `{"a":1,"text":"` + strings.Repeat("y", 1<<20) + `","b":[true,null]}`, outputs, true, true},
		{"JSON full of control bytes", mustJSON(t, map[string]any{"output": ctl, "exit_code": 0}), outputs, true, true},
		{"JSON of many small strings", mustJSON(t, strings.Split(strings.Repeat("ab,", 100_000), ",")), outputs, true, true},
		{"JSON of numbers", mustJSON(t, make([]int, 200_000)), outputs, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewRegistry(fakeTool{name: "big", run: func(context.Context, Env, json.RawMessage) (string, error) { return c.result, nil }})
			if err != nil {
				t.Fatal(err)
			}
			res := r.Call(context.Background(), Env{MaxOutputChars: 1000, OutputDir: c.dir, SessionID: "sess"}, Call{ID: "a", Name: "big", Arguments: `{"x":"y"}`})
			if res.IsError {
				t.Fatal(res.Content)
			}
			if len(c.result) <= 2000 {
				if res.Content != c.result {
					t.Fatal("a result within twice the cap changed")
				}
				return
			}
			if n := len([]rune(res.Content)); n > 1000+400 {
				t.Fatalf("the model gets %d characters:\n%.2000s", n, res.Content)
			}
			if c.wantJSON && !json.Valid([]byte(res.Content)) {
				t.Fatalf("the cut JSON result is not valid JSON:\n%s", res.Content)
			}
			if hasFile := strings.Contains(res.Content, filepath.Join(outputs, "sess")); hasFile != c.wantFile {
				t.Fatalf("names the kept file: %v, want %v:\n%s", hasFile, c.wantFile, res.Content)
			}
			if c.wantFile {
				files, _ := filepath.Glob(filepath.Join(outputs, "sess", "output-*.txt"))
				found := false
				for _, f := range files {
					data, _ := os.ReadFile(f)
					found = found || string(data) == c.result
				}
				if !found {
					t.Fatal("the whole result is not kept")
				}
			}
		})
	}
}

// TestSessionDirName: a safe id is its own directory; anything that could
// leave the directory or is not plain is a digest that no safe id equals.
func TestSessionDirName(t *testing.T) {
	cases := []struct {
		id, want string
		digest   bool
	}{
		{id: "20261201-023800-ab12cd34", want: "20261201-023800-ab12cd34"},
		{id: "cron.job-1.1764556800", want: "cron.job-1.1764556800"},
		{id: "root~2", want: "root~2"},
		{id: "..", digest: true},
		{id: ".hidden", digest: true},
		{id: "a/../../etc", digest: true},
		{id: "a\\b", digest: true},
		{id: "chat 42", digest: true},
		{id: "é", digest: true},
		{id: "a\x00b", digest: true},
		{id: strings.Repeat("x", 129), digest: true},
	}
	seen := map[string]string{}
	for _, c := range cases {
		got, err := SessionDirName(c.id)
		if err != nil {
			t.Fatalf("%q: %v", c.id, err)
		}
		if c.digest {
			if !strings.HasPrefix(got, "@") || len(got) != 33 || !safeComponent(got[1:]) {
				t.Errorf("%q: got %q, want a digest", c.id, got)
			}
		} else if got != c.want {
			t.Errorf("%q: got %q, want %q", c.id, got, c.want)
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("%q and %q share %q", prev, c.id, got)
		}
		seen[got] = c.id
	}
	if _, err := SessionDirName(""); err == nil {
		t.Error("an empty session id has a directory")
	}
}
