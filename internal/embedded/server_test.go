package embedded

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
)

func quietSDKLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

func TestEphemeralRunsWorkflowWithActivity(t *testing.T) {
	s := startEphemeral(t, Options{})
	if got := s.Namespace(); got != "default" {
		t.Errorf("Namespace() = %q, want default", got)
	}
	// Without a port, the frontend is on the process's own loopback address.
	if host, _, err := net.SplitHostPort(s.HostPort()); err != nil || host != internalIP() {
		t.Errorf("HostPort() = %q (%v), want %s:PORT", s.HostPort(), err, internalIP())
	}
	if runtime.GOOS == "linux" && internalIP() == defaultIP {
		t.Errorf("internalIP() = %s on Linux, want an address of this process's own", internalIP())
	}
	c := dial(t, s)
	w := startWorker(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := runEcho(ctx, c, "echo-1", "hi")
	if err != nil {
		t.Fatal(err)
	}
	if out != "hi!" {
		t.Fatalf("workflow result = %q, want %q", out, "hi!")
	}
	w.Stop()
	c.Close()
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestEphemeralCustomNamespace(t *testing.T) {
	s := startEphemeral(t, Options{Namespace: "talaria-test"})
	c := dial(t, s)
	startWorker(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := runEcho(ctx, c, "echo-ns", "x"); err != nil {
		t.Fatal(err)
	}
}

func TestTwoEphemeralServersAtOnce(t *testing.T) {
	servers := make([]*Server, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range servers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			servers[i], errs[i] = Start(ctx, Options{Ephemeral: true})
		})
	}
	wg.Wait()
	for i, s := range servers {
		if s != nil {
			t.Cleanup(func() {
				if err := s.Stop(); err != nil {
					t.Errorf("stop server %d: %v", i, err)
				}
			})
		}
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start server %d: %v", i, err)
		}
	}
	if servers[0].HostPort() == servers[1].HostPort() {
		t.Fatalf("both servers on %s", servers[0].HostPort())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, s := range servers {
		c := dial(t, s)
		startWorker(t, c)
		// The same workflow ID on both proves the stores are separate.
		out, err := runEcho(ctx, c, "same-id", strconv.Itoa(i))
		if err != nil {
			t.Fatalf("server %d: %v", i, err)
		}
		if want := strconv.Itoa(i) + "!"; out != want {
			t.Fatalf("server %d result = %q, want %q", i, out, want)
		}
	}
}

func TestFileModeWorkflowSurvivesRestartOnSamePort(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	began := time.Now()
	s1, err := Start(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatalf("first start: %v", err)
	}
	t.Logf("file mode first start (schema creation): %v", time.Since(began))
	t.Cleanup(func() { _ = s1.Stop() })

	// A second server on the same directory is refused while s1 runs.
	if s, err := Start(ctx, Options{DataDir: dir}); !errors.Is(err, ErrDataDirLocked) {
		if s != nil {
			_ = s.Stop()
		}
		t.Fatalf("second server on a used dir: err = %v, want ErrDataDirLocked", err)
	}

	_, portStr, err := net.SplitHostPort(s1.HostPort())
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := client.Dial(client.Options{HostPort: s1.HostPort(), Namespace: s1.Namespace(), Logger: quietSDKLogger()})
	if err != nil {
		t.Fatal(err)
	}
	w1 := startWorker(t, c1)
	run, err := c1.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "wait-for-signal", TaskQueue: testTaskQueue}, signalWorkflow)
	if err != nil {
		t.Fatalf("start workflow: %v", err)
	}
	waitWorkflowTaskDone(ctx, t, c1, run.GetID())
	w1.Stop()
	c1.Close()
	if err := s1.Stop(); err != nil {
		t.Fatalf("stop first server: %v", err)
	}

	began = time.Now()
	host, _, _ := net.SplitHostPort(s1.HostPort())
	s2, err := Start(ctx, Options{DataDir: dir, IP: host, Port: port})
	if err != nil {
		t.Fatalf("restart on same dir and port %d: %v", port, err)
	}
	t.Logf("file mode restart: %v", time.Since(began))
	t.Cleanup(func() { _ = s2.Stop() })
	if s2.HostPort() != s1.HostPort() {
		t.Fatalf("restart address %s, want %s", s2.HostPort(), s1.HostPort())
	}
	c2 := dial(t, s2)
	startWorker(t, c2)
	if err := c2.SignalWorkflow(ctx, run.GetID(), "", signalName, "hello"); err != nil {
		t.Fatalf("signal after restart: %v", err)
	}
	var out string
	if err := c2.GetWorkflow(ctx, run.GetID(), run.GetRunID()).Get(ctx, &out); err != nil {
		t.Fatalf("result after restart: %v", err)
	}
	if out != "got hello" {
		t.Fatalf("result = %q, want %q", out, "got hello")
	}
	if err := s2.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if mode := journalMode(t, filepath.Join(dir, DBFileName)); mode != "wal" {
		t.Fatalf("journal_mode = %q, want wal", mode)
	}
}

// waitWorkflowTaskDone waits until the workflow's first workflow task has
// completed, i.e. the workflow is parked waiting for its signal.
func waitWorkflowTaskDone(ctx context.Context, t *testing.T, c client.Client, id string) {
	t.Helper()
	for {
		desc, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err == nil && desc.GetPendingWorkflowTask() == nil && desc.GetWorkflowExecutionInfo().GetHistoryLength() >= 4 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("workflow %s never completed its first task (last error %v)", id, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func journalMode(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatalf("read journal_mode: %v", err)
	}
	return mode
}

func TestBadDataDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "regular-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for name, dir := range map[string]string{
		"under a regular file": filepath.Join(file, "data"),
		"a regular file":       file,
		"empty":                "",
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Start(ctx, Options{DataDir: dir})
			if s != nil {
				_ = s.Stop()
			}
			if !errors.Is(err, ErrDataDir) {
				t.Fatalf("Start(DataDir=%q) error = %v, want ErrDataDir", dir, err)
			}
		})
	}
	if os.Geteuid() != 0 { // root ignores directory permissions
		t.Run("read-only", func(t *testing.T) {
			ro := filepath.Join(t.TempDir(), "ro")
			if err := os.Mkdir(ro, 0o500); err != nil {
				t.Fatal(err)
			}
			if _, err := Start(ctx, Options{DataDir: ro}); !errors.Is(err, ErrDataDir) {
				t.Fatalf("error = %v, want ErrDataDir", err)
			}
		})
	}
}

func TestBadNetworkOptions(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cases := []struct {
		name string
		opts Options
		want error
	}{
		{"port in use", Options{Ephemeral: true, Port: busy}, ErrPortUnavailable},
		{"bad ip", Options{Ephemeral: true, IP: "localhost"}, ErrInvalidOptions},
		{"negative port", Options{Ephemeral: true, Port: -1}, ErrInvalidOptions},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Start(ctx, tc.opts)
			if s != nil {
				_ = s.Stop()
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
		})
	}
}
