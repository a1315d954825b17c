package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/pgtest"
	"github.com/talaria-agent/talaria/models"
)

// daemon starts a long-running talaria command and waits for its ready line.
func (u *user) daemon(ready string, args ...string) *server {
	u.t.Helper()
	cmd := u.command(context.Background(), args...)
	s := &server{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	w := &lockedWriter{w: s.stderr}
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		u.t.Fatal(err)
	}
	go func() { s.done <- cmd.Wait() }()
	u.t.Cleanup(s.kill)
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			u.t.Fatalf("%v exited early: %v\n%s", args, err, s.stderr.String())
		default:
		}
		w.mu.Lock()
		ok := strings.Contains(s.stderr.String(), ready)
		w.mu.Unlock()
		if ok {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	u.t.Fatalf("%v never became ready:\n%s", args, s.stderr.String())
	return nil
}

// parentOf reads a process's parent pid from /proc.
func parentOf(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// TestWorkerKilledDuringTool: one embedded-Temporal process, two workers,
// PostgreSQL. The worker running a tool is SIGKILLed; the other finishes the
// turn; the non-idempotent command ran exactly once, and the model was told
// its outcome is unknown rather than having it run twice.
func TestWorkerKilledDuringTool(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("several processes")
	}
	dsn := pgtest.DSN(t, "scaleout")
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "t1", Name: "terminal", Arguments: `{"command":"echo ran >> effects.log; sleep 30.123"}`}),
		fakellm.TextStep("I will check effects.log before trying again."),
	)
	defer model.Close()

	temporalHost := newUser(t, model.URL())
	port := freePort(t)
	temporalHost.daemon("talaria temporal: ready", "temporal", "--temporal-port", fmt.Sprint(port), "--ui-port", "0")
	// Workers and clients on other homes present the server's credential.
	cred := engine.CredentialPath(temporalHost.home)
	shared := map[string]string{"TEMPORAL_ADDRESS": fmt.Sprintf("127.0.0.1:%d", port), "TALARIA_DB": dsn, "TALARIA_HEARTBEAT_TIMEOUT": "3s",
		"TEMPORAL_TLS_CERT": cred, "TEMPORAL_TLS_KEY": cred, "TEMPORAL_TLS_CA": cred, "TEMPORAL_TLS_SERVER_NAME": "localhost"}
	var workers []*server
	for range 2 {
		w := newUser(t, model.URL())
		for k, v := range shared {
			w.env[k] = v
		}
		workers = append(workers, w.daemon("talaria worker: ready", "worker"))
	}
	sender := newUser(t, model.URL())
	for k, v := range shared {
		sender.env[k] = v
	}
	if out, stderr, code := sender.run(time.Minute, "send", "multi", "append a line", "--mode", "queue"); code != 0 {
		t.Fatalf("send: exit %d %s%s", code, out, stderr)
	}

	// Find the worker running the command, once the command's effect is
	// there (the shell's own command line names the sleep too, so the
	// process is found before the echo ran), and kill it.
	waitFor(t, time.Minute, func() bool {
		log, _ := os.ReadFile(filepath.Join(sender.workdir, "effects.log"))
		return strings.Contains(string(log), "ran")
	})
	var sleepPid int
	waitFor(t, time.Minute, func() bool {
		out, err := exec.Command("pgrep", "-f", "sleep 30.123").Output()
		if err != nil {
			return false
		}
		sleepPid, _ = strconv.Atoi(strings.Fields(string(out))[0])
		return true
	})
	var victim *server
	for p := sleepPid; p > 1 && victim == nil; p = parentOf(p) {
		for _, w := range workers {
			if w.cmd.Process.Pid == p {
				victim = w
			}
		}
	}
	if victim == nil {
		t.Fatal("no worker runs the command")
	}
	_ = victim.cmd.Process.Signal(syscall.SIGKILL)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	store, err := models.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	waitFor(t, 90*time.Second, func() bool {
		turns, err := store.Turns(ctx, "multi")
		return err == nil && len(turns) == 1 && turns[0].Status == "completed"
	})
	log, err := os.ReadFile(filepath.Join(sender.workdir, "effects.log"))
	if err != nil || strings.Count(string(log), "ran") != 1 {
		t.Fatalf("effects.log = %q (%v): the command must have run exactly once", log, err)
	}
	msgs, err := store.Messages(ctx, "multi")
	if err != nil {
		t.Fatal(err)
	}
	var result string
	for _, m := range msgs {
		if m.Role == "tool" && m.ToolCallID == "t1" {
			result = m.Content
		}
	}
	if result != activities.OutcomeUnknown {
		t.Fatalf("tool result = %q, want the outcome-unknown answer", result)
	}
}
