package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// keepOutput runs a tool returning size bytes of text far above the cap in
// session, so its whole result is kept; it returns the kept file.
func keepOutput(t *testing.T, env Env, session string, size int) string {
	t.Helper()
	big := strings.Repeat("k", size)
	r, err := NewRegistry(fakeTool{name: "big", run: func(context.Context, Env, json.RawMessage) (string, error) { return big, nil }})
	if err != nil {
		t.Fatal(err)
	}
	env.SessionID = session
	res := r.Call(context.Background(), env, Call{ID: "c", Name: "big", Arguments: `{}`})
	_, after, ok := strings.Cut(res.Content, " is in ")
	if !ok {
		_, after, ok = strings.Cut(res.Content, " are in ")
	}
	if !ok {
		t.Fatalf("no file named:\n%.500s", res.Content)
	}
	path, _, _ := strings.Cut(after, "; read")
	path = strings.TrimSuffix(path, " (the outputs quota allowed no more)")
	return path
}

// TestOutputQuotaEvictsOldestFirst: once the kept outputs would pass the
// quota, the oldest files go first, of any session; an output larger than
// the quota is kept up to the quota, and says so.
func TestOutputQuotaEvictsOldestFirst(t *testing.T) {
	outputs := filepath.Join(t.TempDir(), "outputs")
	env := Env{MaxOutputChars: 100, OutputDir: outputs, Policy: Policy{OutputQuota: 250_000}}
	old := time.Now().Add(-time.Hour)
	var files []string
	for i, s := range []string{"a", "b", "a"} {
		f := keepOutput(t, env, s, 100_000)
		if err := os.Chtimes(f, old.Add(time.Duration(i)*time.Minute), old.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if _, err := os.Stat(files[0]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the oldest file stays: %v", err)
	}
	for _, f := range files[1:] {
		if info, err := os.Stat(f); err != nil || info.Size() != 100_000 {
			t.Fatalf("a newer file is gone or cut: %v", err)
		}
	}
	if used := totalKept(outputs); used > 250_000 {
		t.Fatalf("%d bytes kept, above the quota", used)
	}

	huge := keepOutput(t, env, "c", 400_000)
	info, err := os.Stat(huge)
	if err != nil || info.Size() != 250_000 {
		t.Fatalf("an output above the quota kept %v bytes (%v), want the quota", info.Size(), err)
	}
	if used := totalKept(outputs); used > 250_000 {
		t.Fatalf("%d bytes kept, above the quota", used)
	}
}

func totalKept(base string) int64 {
	var n int64
	for _, f := range scanKept(base) {
		n += f.size
	}
	return n
}

// TestKeptOutputsAreReadOnlyByTheirSession: read_file reads the current
// session's kept outputs, even under read roots, and refuses another
// session's, a hard link or a symlink placed among them, and a file
// below a subdirectory, with or without read roots.
func TestKeptOutputsAreReadOnlyByTheirSession(t *testing.T) {
	home := t.TempDir()
	outputs := filepath.Join(home, "outputs")
	work, elsewhere := t.TempDir(), t.TempDir()
	secret := writeTestFile(t, elsewhere, "config.yaml", "api_key: sk-secret\n")
	base := Env{Workdir: work, MaxOutputChars: 100, OutputDir: outputs}
	fileA := keepOutput(t, base, "A", 10_000)
	fileB := keepOutput(t, base, "B", 10_000)
	dirA := filepath.Dir(fileA)
	hard := filepath.Join(dirA, "output-hard.txt")
	if err := os.Link(secret, hard); err != nil {
		t.Fatal(err)
	}
	// A kept file with a second name elsewhere is refused too.
	linkedAway := keepOutput(t, base, "A", 10_000)
	if err := os.Link(linkedAway, filepath.Join(work, "copy.txt")); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(dirA, "output-sym.txt")
	if err := os.Symlink(fileB, sym); err != nil {
		t.Fatal(err)
	}
	nested := writeTestFile(t, dirA, "sub/output-x.txt", "x")
	for _, roots := range [][]string{nil, {elsewhere}} {
		env := base
		env.SessionID = "A"
		env.Policy.ReadRoots = roots
		cases := []struct {
			name string
			path string
			ok   bool
		}{
			{"own kept output", fileA, true},
			{"another session's", fileB, false},
			{"a symlink to another session's", sym, false},
			{"a hard link to a file elsewhere", hard, false},
			{"a kept file with another name", linkedAway, false},
			{"below a subdirectory", nested, false},
			{"the outputs directory", filepath.Join(outputs, "B", "output-none.txt"), false},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				out, err := runTool(t, ReadFile, env, mustJSON(t, map[string]any{"path": c.path}))
				if c.ok {
					if err != nil || !strings.Contains(out, "kkkk") {
						t.Fatalf("refused its own output: %v", err)
					}
					return
				}
				if err == nil || !errors.Is(err, ErrOutsideRoots) {
					t.Fatalf("read roots %v: read %s: %v\n%.200s", roots, c.path, err, out)
				}
				if strings.Contains(out, "sk-secret") || strings.Contains(out, "kkkk") {
					t.Fatal("content leaked")
				}
			})
		}
	}
	// No session: nothing under the outputs directory is read.
	if _, err := runTool(t, ReadFile, base, mustJSON(t, map[string]any{"path": fileA})); !errors.Is(err, ErrOutsideRoots) {
		t.Fatalf("read a kept output without a session: %v", err)
	}
}

// TestSpillRefusesSymlinkedDirectories: an outputs directory or a
// session's directory that is a symlink is not written through; the
// model is told the output could not be kept.
func TestSpillRefusesSymlinkedDirectories(t *testing.T) {
	target := t.TempDir()
	cases := []struct {
		name  string
		setup func(t *testing.T, outputs string)
	}{
		{"outputs is a symlink", func(t *testing.T, outputs string) {
			if err := os.Symlink(target, outputs); err != nil {
				t.Fatal(err)
			}
		}},
		{"the session's directory is a symlink", func(t *testing.T, outputs string) {
			if err := os.Mkdir(outputs, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(outputs, "S")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outputs := filepath.Join(t.TempDir(), "outputs")
			c.setup(t, outputs)
			r, err := NewRegistry(fakeTool{name: "big", run: func(context.Context, Env, json.RawMessage) (string, error) { return strings.Repeat("z", 10_000), nil }})
			if err != nil {
				t.Fatal(err)
			}
			res := r.Call(context.Background(), Env{MaxOutputChars: 100, OutputDir: outputs, SessionID: "S"}, Call{ID: "c", Name: "big", Arguments: `{}`})
			if !strings.Contains(res.Content, "could not be kept") {
				t.Fatalf("no refusal:\n%s", res.Content)
			}
			if entries, _ := os.ReadDir(target); len(entries) != 0 {
				t.Fatalf("wrote through the symlink: %v", entries)
			}
		})
	}
}

// TestOutputCleanup: deleting a session removes its directory only;
// pruning removes what did not change within the retention and keeps the
// rest; neither follows a symlink out of the outputs directory.
func TestOutputCleanup(t *testing.T) {
	outputs := filepath.Join(t.TempDir(), "outputs")
	outside := t.TempDir()
	keep := writeTestFile(t, outside, "keep.txt", "keep")
	env := Env{MaxOutputChars: 100, OutputDir: outputs}
	a := keepOutput(t, env, "A", 1000)
	b := keepOutput(t, env, "B", 1000)
	c := keepOutput(t, env, "C", 1000)
	if err := os.Symlink(outside, filepath.Join(outputs, "D")); err != nil {
		t.Fatal(err)
	}

	if err := RemoveSessionOutputs(outputs, "A"); err != nil {
		t.Fatal(err)
	}
	if err := RemoveSessionOutputs(outputs, "never-kept"); err != nil {
		t.Fatalf("a session with nothing kept: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(a)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("A's directory stays: %v", err)
	}
	if err := RemoveSessionOutputs(outputs, "D"); err != nil {
		t.Fatalf("a session directory that is a symlink: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(outputs, "D")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the symlink stays: %v", err)
	}
	if err := RemoveSessionOutputs(filepath.Join(t.TempDir(), "none"), "A"); err != nil {
		t.Fatalf("no outputs directory: %v", err)
	}

	now := time.Now()
	old := now.Add(-40 * 24 * time.Hour)
	for _, p := range []string{c, filepath.Dir(c)} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(filepath.Dir(b), "out")); err != nil {
		t.Fatal(err)
	}
	n, err := PruneOutputs(outputs, DefaultOutputRetention, now)
	if err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want C's directory", n, err)
	}
	if _, err := os.Stat(filepath.Dir(c)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("C's old directory stays: %v", err)
	}
	if _, err := os.Stat(b); err != nil {
		t.Fatalf("B's recent output is gone: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("a file outside the outputs directory is gone: %v", err)
	}
	// B aged: its directory goes, the symlink in it, not what it points to.
	for _, p := range []string{b, filepath.Dir(b)} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := PruneOutputs(outputs, time.Nanosecond, now.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want B's directory", n, err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("a file outside the outputs directory is gone: %v", err)
	}
}

// TestOutputQuotaHoldsUnderParallelCalls: a batch of calls keeping long
// outputs at the same time stays within the quota together.
func TestOutputQuotaHoldsUnderParallelCalls(t *testing.T) {
	outputs := filepath.Join(t.TempDir(), "outputs")
	big := strings.Repeat("p", 300_000)
	r, err := NewRegistry(fakeTool{name: "big", run: func(context.Context, Env, json.RawMessage) (string, error) { return big, nil }})
	if err != nil {
		t.Fatal(err)
	}
	calls := make([]Call, 16)
	for i := range calls {
		calls[i] = Call{ID: itoa(i), Name: "big", Arguments: `{}`}
	}
	env := Env{MaxOutputChars: 100, OutputDir: outputs, SessionID: "par", Policy: Policy{OutputQuota: 1_000_000}}
	for _, res := range r.RunBatch(context.Background(), env, calls) {
		if res.IsError || len(res.Content) > 1000 {
			t.Fatalf("call %s: %.300s", res.CallID, res.Content)
		}
	}
	if used := totalKept(outputs); used > 1_000_000 || used == 0 {
		t.Fatalf("%d bytes kept, want within the quota of 1000000", used)
	}
}
