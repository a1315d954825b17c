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
// model as head and tail naming a file that holds all of it, which
// read_file may read even when read roots exclude it; a short output, or
// no output directory, writes no file.
func TestTerminalKeepsLongOutputInFull(t *testing.T) {
	work, outputs, other := t.TempDir(), filepath.Join(t.TempDir(), "outputs"), t.TempDir()
	cases := []struct {
		name      string
		env       Env
		command   string
		wantBytes int  // length of the full output
		wantFile  bool // a file keeps it
	}{
		{"long output is kept", Env{Workdir: work, MaxOutputChars: 1000, OutputDir: outputs}, "head -c 1000000 /dev/zero | tr '\\0' a", 1_000_000, true},
		{"output at the cap is not", Env{Workdir: work, MaxOutputChars: 1000, OutputDir: outputs}, "head -c 1000 /dev/zero | tr '\\0' b", 1000, false},
		{"no output directory, no file", Env{Workdir: work, MaxOutputChars: 1000}, "head -c 5000 /dev/zero | tr '\\0' c", 5000, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := runTool(t, TerminalTool{}, c.env, mustJSON(t, map[string]string{"command": c.command}))
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
			data, err := os.ReadFile(r.FullOutput)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) != c.wantBytes || strings.Trim(string(data), "a") != "" {
				t.Fatalf("the file holds %d bytes, want %d", len(data), c.wantBytes)
			}
			env := Env{Workdir: work, OutputDir: outputs, Policy: Policy{ReadRoots: []string{other}}}
			got, err := runTool(t, ReadFileTool{}, env, mustJSON(t, map[string]any{"path": r.FullOutput, "limit": 1}))
			if err != nil || !strings.Contains(got, "aaaa") {
				t.Fatalf("read_file of the kept output under read roots: %v\n%.300s", err, got)
			}
		})
	}
}

func TestSpillWriterBoundsTheFile(t *testing.T) {
	w := newSpillWriter(t.TempDir(), 10)
	w.max = 3 << 20
	chunk := make([]byte, 1<<20)
	for range 5 {
		if n, err := w.Write(chunk); n != len(chunk) || err != nil {
			t.Fatalf("write: %d, %v", n, err)
		}
	}
	note := w.close()
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
// tail within the cap, the whole kept in the output directory; a result
// within twice the cap is left alone.
func TestRegistryBoundsEveryResult(t *testing.T) {
	outputs := filepath.Join(t.TempDir(), "outputs")
	cases := []struct {
		name     string
		size     int
		dir      string
		wantFile bool
	}{
		{"within twice the cap", 2000, outputs, false},
		{"far above, kept", 1 << 20, outputs, true},
		{"far above, no directory", 1 << 20, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			big := strings.Repeat("z", c.size)
			r, err := NewRegistry(fakeTool{name: "big", run: func(context.Context, Env, json.RawMessage) (string, error) { return big, nil }})
			if err != nil {
				t.Fatal(err)
			}
			res := r.Call(context.Background(), Env{MaxOutputChars: 1000, OutputDir: c.dir}, Call{ID: "a", Name: "big", Arguments: `{"x":"y"}`})
			if res.IsError {
				t.Fatal(res.Content)
			}
			if c.size <= 2000 {
				if res.Content != big {
					t.Fatal("a result within twice the cap changed")
				}
				return
			}
			if len(res.Content) > 1000+300 {
				t.Fatalf("the model gets %d bytes", len(res.Content))
			}
			if hasFile := strings.Contains(res.Content, outputs); hasFile != c.wantFile {
				t.Fatalf("names the kept file: %v, want %v:\n%s", hasFile, c.wantFile, res.Content)
			}
			if c.wantFile {
				files, _ := filepath.Glob(filepath.Join(outputs, "output-*.txt"))
				found := false
				for _, f := range files {
					data, _ := os.ReadFile(f)
					found = found || string(data) == big
				}
				if !found {
					t.Fatal("the whole result is not kept")
				}
			}
		})
	}
}
