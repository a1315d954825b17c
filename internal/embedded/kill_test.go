package embedded

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

const killHelperEnv = "EMBEDDED_KILL_HELPER_DIR"

// TestKilledProcessHelper is the child process of
// TestFileModeWorkflowSurvivesSIGKILL; it does nothing in a normal run.
func TestKilledProcessHelper(t *testing.T) {
	dir := os.Getenv(killHelperEnv)
	if dir == "" {
		t.Skip("helper process only")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatalf("child start: %v", err)
	}
	c := dial(t, s)
	startWorker(t, c)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "survives-kill", TaskQueue: testTaskQueue}, signalWorkflow)
	if err != nil {
		t.Fatalf("child start workflow: %v", err)
	}
	waitWorkflowTaskDone(ctx, t, c, run.GetID())
	fmt.Printf("READY %s %s\n", s.HostPort(), run.GetRunID())
	<-ctx.Done() // the parent kills this process long before
}

func TestFileModeWorkflowSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process running a server")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKilledProcessHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), killHelperEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	var hostPort, runID string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "READY" {
			hostPort, runID = f[1], f[2]
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown at all
		t.Fatalf("kill child: %v", err)
	}
	_ = cmd.Wait()
	if hostPort == "" {
		t.Fatalf("child never reported ready (scan error %v)", sc.Err())
	}
	// Another process's servers bind another loopback address than ours.
	if host, _, _ := net.SplitHostPort(hostPort); runtime.GOOS == "linux" && host == internalIP() {
		t.Errorf("the child's server is on %s, this process's own address", host)
	}
	_, portStr, _ := strings.Cut(hostPort, ":")
	port, err := strconv.Atoi(portStr)
	if err != nil {
		t.Fatalf("child address %q: %v", hostPort, err)
	}

	began := time.Now()
	s, err := Start(ctx, Options{DataDir: dir, Port: port})
	if err != nil {
		t.Fatalf("start after SIGKILL: %v", err)
	}
	t.Logf("file mode start after SIGKILL: %v", time.Since(began))
	t.Cleanup(func() { _ = s.Stop() })
	c := dial(t, s)
	startWorker(t, c)
	if err := c.SignalWorkflow(ctx, "survives-kill", runID, signalName, "again"); err != nil {
		t.Fatalf("signal after SIGKILL: %v", err)
	}
	var out string
	if err := c.GetWorkflow(ctx, "survives-kill", runID).Get(ctx, &out); err != nil {
		t.Fatalf("result after SIGKILL: %v", err)
	}
	if out != "got again" {
		t.Fatalf("result = %q, want %q", out, "got again")
	}
}
