package sandbox

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// run runs a bash script in a sandbox made for c and returns its output.
func run(t *testing.T, c Command, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = c.Dir
	if err := Wrap(cmd, c); err != nil {
		t.Fatalf("wrap: %v", err)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	wait, err := Start(cmd, c.Settings)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	err = wait()
	return out.String(), err
}

func needSandbox(t *testing.T) {
	t.Helper()
	if err := Check(Settings{}); err != nil {
		t.Fatalf("no sandbox here (make test installs bubblewrap): %v", err)
	}
}

// listen starts a listener that counts the connections it accepts.
func listen(t *testing.T) (port int, seen *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	seen = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			seen.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, seen
}

// TestNetwork: with the network off nothing on this machine is reached;
// with it on, any port but Talaria's own is, and Talaria's are not.
func TestNetwork(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	own, ownSeen := listen(t)
	other, otherSeen := listen(t)
	dir := t.TempDir()
	connect := func(port int) string {
		return "python3 -c \"import socket; socket.create_connection(('127.0.0.1', " + strconv.Itoa(port) + "), 2)\" 2>&1; echo rc=$?"
	}
	off := Command{Settings: Settings{Ports: []int{own}}, Dir: dir, Writable: []string{dir}}
	if out, _ := run(t, off, connect(other)); !strings.Contains(out, "rc=1") {
		t.Errorf("network off reached a port: %s", out)
	}
	on := off
	on.Network = NetworkOn
	if out, _ := run(t, on, connect(other)); !strings.Contains(out, "rc=0") {
		t.Errorf("network on did not reach port %d: %s", other, out)
	}
	if out, _ := run(t, on, connect(own)+"; python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1', "+strconv.Itoa(own)+"))\" 2>&1 | tail -1"); !strings.Contains(out, "rc=1") || !strings.Contains(out, "Permission denied") {
		t.Errorf("network on reached or bound Talaria's port %d: %s", own, out)
	}
	// A port this process protects (an embedded server's service) is out
	// of reach as well.
	served, servedSeen := listen(t)
	ProtectPorts(served)
	if out, _ := run(t, on, connect(served)); !strings.Contains(out, "rc=1") || servedSeen.Load() != 0 {
		t.Errorf("network on reached a protected port %d: %s", served, out)
	}
	if ownSeen.Load() != 0 || otherSeen.Load() != 1 {
		t.Errorf("connections: own %d (want 0), other %d (want 1)", ownSeen.Load(), otherSeen.Load())
	}
}

// TestFiles: only the writable roots and /tmp are written; hidden paths
// are empty; read-only files stay as they are; the host's /tmp is not seen.
func TestFiles(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	root := t.TempDir()
	ws, secret, out := filepath.Join(root, "ws"), filepath.Join(root, "secret"), filepath.Join(root, "out")
	for _, d := range []string{ws, filepath.Join(ws, "inner"), secret, out} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(secret, "key"), []byte("SECRET"), 0o600)
	os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("rules"), 0o644)
	os.WriteFile(filepath.Join(ws, ".netrc"), []byte("SECRET"), 0o600)
	c := Command{Dir: ws, Writable: []string{ws}, Hidden: []string{secret, filepath.Join(ws, ".netrc")}, ReadOnly: []string{filepath.Join(ws, "AGENTS.md")}}
	got, _ := run(t, c, `echo a > made.txt; echo b > /tmp/t && cat /tmp/t; echo c > `+out+`/x 2>&1; ls -A `+secret+`; cat `+secret+`/key .netrc; echo d >> AGENTS.md 2>&1; rm -f AGENTS.md 2>&1; ls `+root+`/.. | head -3; echo end`)
	if b, _ := os.ReadFile(filepath.Join(ws, "made.txt")); string(b) != "a\n" {
		t.Errorf("the workspace was not written: %q", b)
	}
	if _, err := os.Stat(filepath.Join(out, "x")); err == nil {
		t.Error("a file was written outside the writable roots")
	}
	if strings.Contains(got, "SECRET") {
		t.Errorf("a hidden file was read: %s", got)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "AGENTS.md")); string(b) != "rules" {
		t.Errorf("a read-only file changed: %q", b)
	}
	if !strings.Contains(got, "b\n") || !strings.Contains(got, "Read-only file system") || !strings.HasSuffix(got, "end\n") {
		t.Errorf("output: %s", got)
	}
	ro := c
	ro.Mode = ModeReadOnly
	if got, _ := run(t, ro, "echo a > made2.txt 2>&1; echo b > /tmp/t && cat /tmp/t"); !strings.Contains(got, "Read-only") || !strings.Contains(got, "b") {
		t.Errorf("read-only mode: %s", got)
	}
}

// TestUnavailable: a bubblewrap that is not there makes no sandbox, and
// says why in one line; off needs none.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	err := Check(Settings{Bwrap: "/nonexistent/bwrap"})
	if err == nil || !strings.Contains(err.Error(), "not installed") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Check: %v", err)
	}
	if err := Wrap(exec.Command("true"), Command{Settings: Settings{Bwrap: "/nonexistent/bwrap"}}); err == nil {
		t.Error("Wrap made a command without a sandbox")
	}
	if err := Check(Settings{Mode: ModeOff, Bwrap: "/nonexistent/bwrap"}); err != nil {
		t.Errorf("off: %v", err)
	}
}

// TestProcesses: the command sees only its own processes, and what it left
// running dies with it.
func TestProcesses(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	dir := t.TempDir()
	got, _ := run(t, Command{Dir: dir, Writable: []string{dir}}, "ls /proc | grep -c '^[0-9]'; cat /proc/1/cmdline | tr '\\0' ' '; echo; (setsid sleep 8181 &) ; echo started")
	if n, _ := strconv.Atoi(strings.Fields(got)[0]); n > 6 {
		t.Errorf("the sandbox sees %d processes: %s", n, got)
	}
	for _, p := range hostProcesses("sleep 8181") {
		t.Errorf("process %s outlived its command", p)
	}
}

func hostProcesses(s string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestSeccomp: the system calls a command never needs fail with EPERM.
func TestSeccomp(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the numbers below are amd64's")
	}
	dir := t.TempDir()
	// ptrace, mount, keyctl, bpf, io_uring_setup, unshare, perf_event_open
	script := `python3 -c "
import ctypes
l = ctypes.CDLL(None, use_errno=True)
for nr in (101, 165, 250, 321, 425, 272, 298):
    r = l.syscall(nr, 0, 0, 0, 0, 0)
    print(nr, r, ctypes.get_errno())
"`
	got, _ := run(t, Command{Dir: dir, Writable: []string{dir}}, script)
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if f := strings.Fields(line); len(f) != 3 || f[1] != "-1" || f[2] != "1" {
			t.Errorf("system call %s: %q, want -1 with EPERM (1)", f[0], line)
		}
	}
	if n := strings.Count(got, "\n"); n != 7 {
		t.Errorf("output: %q", got)
	}
	// A system call of another architecture (32-bit int 0x80) fails too.
	if _, err := exec.LookPath("gcc"); err != nil {
		return
	}
	src := filepath.Join(dir, "i386.c")
	os.WriteFile(src, []byte(`#include <stdio.h>
int main(void) { long r; __asm__ volatile ("int $0x80" : "=a"(r) : "a"(26), "b"(0), "c"(0), "d"(0)); printf("%ld\n", r); return 0; }`), 0o644)
	if out, err := exec.Command("gcc", "-o", filepath.Join(dir, "i386"), src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v: %s", err, out)
	}
	// Where the kernel takes no 32-bit system calls (ia32 emulation off:
	// int 0x80 is a segmentation fault, as on some virtual machines),
	// there is nothing for the filter to refuse.
	if out, err := exec.Command(filepath.Join(dir, "i386")).Output(); err != nil {
		t.Logf("this kernel takes no 32-bit system calls (%v: %q): nothing to filter", err, out)
		return
	}
	// 26 is ptrace in the i386 table: -1 (EPERM) from the filter, not
	// -3 (ESRCH) from the kernel.
	if got, _ := run(t, Command{Dir: dir, Writable: []string{dir}}, "./i386"); strings.TrimSpace(got) != "-1" {
		t.Errorf("a 32-bit ptrace returned %q, want -1 (EPERM)", got)
	}
}

// TestSealInherited: a descriptor the process holds without
// close-on-exec (as one its parent left open) gets it.
func TestSealInherited(t *testing.T) {
	t.Parallel()
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil { // no close-on-exec
		t.Fatal(err)
	}
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])
	if flags, err := unix.FcntlInt(uintptr(p[0]), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC != 0 {
		t.Fatalf("the pipe starts close-on-exec: %v %v", flags, err)
	}
	SealInherited()
	for _, fd := range p {
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
			t.Errorf("descriptor %d is not close-on-exec: %v %v", fd, flags, err)
		}
	}
}
