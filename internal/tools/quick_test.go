package tools

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// specialFiles creates a FIFO, a listening Unix socket and a directory in
// dir, and a character device like /dev/null when the system allows it;
// the map is name -> the kind the refusal must name.
func specialFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	kinds := map[string]string{"fifo": "named pipe (FIFO)", "sock": "socket", "adir": "is a directory"}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	// 1:3 is /dev/null's device number; creating it needs CAP_MKNOD.
	if err := syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		kinds["null"] = "character device"
	}
	return kinds
}

// runWithin runs a tool and fails the test if it does not return within
// limit: a tool that blocks on a special file would hang here.
func runWithin(t *testing.T, limit time.Duration, tool Tool, env Env, args string) (string, error) {
	t.Helper()
	type outcome struct {
		out string
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		out, err := tool.Run(context.Background(), env, json.RawMessage(args))
		done <- outcome{out, err}
	}()
	select {
	case o := <-done:
		return o.out, o.err
	case <-time.After(limit):
		t.Fatalf("%s %s did not return within %v", tool.Name(), args, limit)
		return "", nil
	}
}

// TestQuickFileToolsRefuseSpecialFiles: read_file and write_file refuse
// FIFOs, sockets, devices and directories with a one-line error naming
// what the file is, without blocking, and write_file leaves the file as
// it was.
func TestQuickFileToolsRefuseSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	kinds := specialFiles(t, dir)
	kinds["/dev/null"] = "character device"
	kinds["/dev/zero"] = "character device"
	for name, kind := range kinds {
		t.Run("read_file "+name, func(t *testing.T) {
			out, err := runWithin(t, time.Minute, ReadFile, Env{Workdir: dir}, mustJSON(t, map[string]string{"path": name}))
			if err == nil {
				t.Fatalf("read %s: got %s, want a refusal", name, out)
			}
			if msg := err.Error(); !strings.Contains(msg, kind) || strings.Contains(msg, "\n") {
				t.Errorf("read %s: error %q does not name %q on one line", name, msg, kind)
			}
		})
		if strings.HasPrefix(name, "/") {
			continue // outside the working directory: refused as not writable
		}
		t.Run("write_file "+name, func(t *testing.T) {
			before, err := os.Lstat(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			out, err := runWithin(t, time.Minute, WriteFile, Env{Workdir: dir}, mustJSON(t, map[string]string{"path": name, "content": "x"}))
			if err == nil {
				t.Fatalf("write %s: got %s, want a refusal", name, out)
			}
			if msg := err.Error(); !strings.Contains(msg, strings.TrimPrefix(kind, "is ")) || !strings.Contains(msg, "nothing was written") {
				t.Errorf("write %s: error %q does not name %q", name, msg, kind)
			}
			after, err := os.Lstat(filepath.Join(dir, name))
			if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
				t.Errorf("write %s replaced the file: %v -> %v (%v)", name, before.Mode(), after, err)
			}
		})
	}
}

func TestNotRegular(t *testing.T) {
	for _, tt := range []struct {
		mode os.FileMode
		want string
	}{
		{0o644, ""},
		{os.ModeDir | 0o755, "is a directory"},
		{os.ModeNamedPipe | 0o644, "is a named pipe (FIFO), not a regular file; read_file only handles regular files"},
		{os.ModeSocket | 0o755, "is a socket, not"},
		{os.ModeDevice | os.ModeCharDevice | 0o666, "is a character device, not"},
		{os.ModeDevice | 0o660, "is a block device, not"},
		{os.ModeSymlink | 0o777, "is a symbolic link, not"},
		{os.ModeIrregular, "is an irregular file, not"},
	} {
		got := notRegular("read_file", tt.mode)
		if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
			t.Errorf("notRegular(%v) = %q, want prefix %q", tt.mode, got, tt.want)
		}
	}
}

// quickFake is a quick tool for deadline tests.
type quickFake struct {
	fakeTool
	idempotent bool
}

func (q quickFake) Quick() bool      { return true }
func (q quickFake) Idempotent() bool { return q.idempotent }

// TestQuickToolDeadline: a quick call that overruns its deadline is
// answered "timed out" on time, even when the tool ignores cancellation
// (stuck in a system call); the rest of the batch keeps its results; a
// tool that is not quick is not bounded by the registry; a cancelled batch
// answers a stuck quick call as cancelled at once.
func TestQuickToolDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stuck := quickFake{fakeTool: fakeTool{name: "stuck", run: func(context.Context, Env, json.RawMessage) (string, error) {
		<-release // ignores ctx, like a read blocked in open(2)
		return "late", nil
	}}}
	polite := quickFake{idempotent: true, fakeTool: fakeTool{name: "polite", run: func(ctx context.Context, _ Env, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		return "", errors.Join(ErrCancelled, ctx.Err())
	}}}
	slowRemote := fakeTool{name: "slow", run: func(context.Context, Env, json.RawMessage) (string, error) {
		time.Sleep(300 * time.Millisecond)
		return "slow done", nil
	}}
	base, err := NewRegistry(stuck, polite, slowRemote, echoTool())
	if err != nil {
		t.Fatal(err)
	}
	r := base.WithQuickTimeout(100 * time.Millisecond)
	if base.deadline(stuck) != QuickTimeout || r.deadline(stuck) != 100*time.Millisecond || r.deadline(slowRemote) != 0 {
		t.Fatalf("deadlines: base %v, bounded %v, slow %v", base.deadline(stuck), r.deadline(stuck), r.deadline(slowRemote))
	}

	t.Run("batch", func(t *testing.T) {
		calls := []Call{
			{ID: "1", Name: "stuck"}, {ID: "2", Name: "polite"}, {ID: "3", Name: "slow"}, {ID: "4", Name: "echo"},
		}
		done := make(chan []Result, 1)
		go func() { done <- r.RunBatch(context.Background(), Env{SessionID: "s"}, calls) }()
		var res []Result
		select {
		case res = <-done:
		case <-time.After(time.Minute):
			t.Fatal("the batch waited for a stuck quick call")
		}
		for _, i := range []int{0, 1} {
			if !res[i].IsError || !res[i].TimedOut || res[i].Cancelled || !strings.Contains(res[i].Content, "did not finish within 100ms") {
				t.Errorf("call %s: %+v, want timed out", res[i].CallID, res[i])
			}
		}
		if !strings.Contains(res[0].Content, "may or may not have taken effect") || !strings.Contains(res[1].Content, "had no effect") {
			t.Errorf("effect notes: %q / %q", res[0].Content, res[1].Content)
		}
		if res[2].IsError || res[2].Content != "slow done" || res[3].IsError || res[3].Content != "s:{}" {
			t.Errorf("the other calls: %+v %+v", res[2], res[3])
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		res := base.Call(ctx, Env{}, Call{ID: "1", Name: "stuck"})
		if !res.IsError || !res.Cancelled || res.TimedOut || !strings.Contains(res.Content, "interrupted while it ran") {
			t.Errorf("cancelled stuck call: %+v", res)
		}
	})
}

// TestMemoryRefusesAFIFO: a FIFO in place of the memory file is refused at
// once with an error naming it, instead of blocking the call while it
// holds the memory lock.
func TestMemoryRefusesAFIFO(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "memories"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(home, "memories", "MEMORY.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runWithin(t, time.Minute, Memory(home), Env{}, `{"action":"add","target":"memory","content":"x"}`)
	if err == nil || !strings.Contains(err.Error(), "named pipe (FIFO), not a regular file") {
		t.Fatalf("memory on a FIFO: %q, %v", out, err)
	}
	if _, err := readRegularFile(filepath.Join(home, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want not exist", err)
	}
}
