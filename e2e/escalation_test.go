package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"os/exec"
	osuser "os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
)

// refusal is how a client without the serve's credential fails.
const refusal = "talaria serve refused the connection: not authorised"

// stranger is a second Unix user (nobody) with their own TALARIA_HOME,
// running a copy of the binary they can execute.
type stranger struct {
	t       *testing.T
	binary  string
	home    string
	workdir string
	env     []string
}

// newStranger prepares nobody's binary, home and working directory; it
// skips the test unless it runs as root with setpriv available.
func newStranger(t *testing.T, modelURL, temporalAddress string) *stranger {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: running a second Unix user's talaria needs root (it switches to nobody with setpriv)")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("skipped: setpriv (util-linux) is not installed")
	}
	nobody, err := osuser.Lookup("nobody")
	if err != nil {
		t.Skipf("skipped: no user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	// The test's temp dirs are 0700 root: give nobody its own world-traversable one.
	root, err := os.MkdirTemp("", "talaria-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	mustChmod(t, root, 0o755)
	s := &stranger{t: t, binary: filepath.Join(root, "talaria"), home: filepath.Join(root, "own", "home"),
		workdir: filepath.Join(root, "own", "work")}
	copyExecutable(t, binary, s.binary)
	for _, dir := range []string{filepath.Dir(s.home), s.workdir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	s.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(s.home), "TALARIA_HOME=" + s.home,
		"TEMPORAL_ADDRESS=" + temporalAddress, "OPENAI_BASE_URL=" + modelURL, "OPENAI_API_KEY=test-key",
		"TALARIA_MODEL=fake-model"}
	return s
}

// run runs talaria as nobody, with extra environment variables (KEY=VALUE),
// and returns its stderr and exit status.
func (s *stranger) run(extraEnv []string, args ...string) (string, int) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	argv := append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups", s.binary}, args...)
	cmd := exec.CommandContext(ctx, "setpriv", argv...)
	cmd.Dir, cmd.Env = s.workdir, append(slices.Clone(s.env), extraEnv...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return errOut.String(), exit.ExitCode()
	case err != nil:
		s.t.Fatalf("run talaria %v as nobody: %v", args, err)
	}
	return errOut.String(), 0
}

// TestOtherUserIsRefused: another Unix user pointing `talaria send` and
// `talaria chat -q` at the owner's serve (TEMPORAL_ADDRESS) is refused by
// the embedded Temporal itself, and no turn runs; the owner still can.
func TestOtherUserIsRefused(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.Step{Text: "owner's answer"})
	defer model.Close()
	owner := newUser(t, model.URL())
	srv := owner.serve(0)
	info, err := engine.ReadServeInfo(owner.home)
	if err != nil {
		t.Fatal(err)
	}
	nobody := newStranger(t, model.URL(), info.TemporalAddress)
	// A client that trusts the certificate the frontend presents (anyone can
	// fetch it) gets past its own checks: the server refuses it.
	trusting := []string{"TEMPORAL_TLS_CA=" + nobody.serverCertFile(info.TemporalAddress),
		"TEMPORAL_TLS_SERVER_NAME=localhost"}
	cases := []struct {
		name string
		env  []string
		args []string
		says string // besides the refusal
	}{
		{"send", nil, []string{"send", "victim", "touch /root/pwned"}, ""},
		{"chat -q", nil, []string{"chat", "-q", "touch /root/pwned"}, ""},
		{"send over TLS without a certificate", trusting, []string{"send", "victim", "touch /root/pwned"},
			"connect to temporal at " + info.TemporalAddress},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stderr, code := nobody.run(tc.env, tc.args...)
			if code == 0 {
				t.Fatalf("talaria %s as nobody exited 0; stderr:\n%s", tc.name, stderr)
			}
			if !strings.Contains(stderr, refusal) || !strings.Contains(stderr, engine.CredentialPath(nobody.home)) ||
				!strings.Contains(stderr, tc.says) {
				t.Fatalf("stderr does not carry the refusal naming %s (and %q):\n%s",
					engine.CredentialPath(nobody.home), tc.says, stderr)
			}
			t.Logf("refused (exit %d): %s", code, strings.TrimSpace(stderr))
		})
	}
	time.Sleep(time.Second) // a turn started anyway would have called the model by now
	if n := len(model.Requests()); n != 0 {
		t.Fatalf("the model received %d requests from refused clients", n)
	}
	// The owner's own client, through the same address, is let in.
	owner.env["TEMPORAL_ADDRESS"] = info.TemporalAddress
	if out, stderr, code := owner.run(time.Minute, "send", "mine", "hello"); code != 0 {
		t.Fatalf("owner's send exited %d:\n%s%s", code, out, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatalf("the owner's turn never reached the model: %v", err)
	}
	t.Logf("serve's stderr:\n%s", srv.stderr.String())
}

// serverCertFile saves the certificate the frontend at address presents in a
// file nobody can read, and returns its path.
func (s *stranger) serverCertFile(address string) string {
	s.t.Helper()
	conn, err := tls.Dial("tcp", address, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}}) //nolint:gosec
	if err != nil {
		s.t.Fatalf("fetch the frontend's certificate: %v", err)
	}
	defer conn.Close()
	cert := conn.ConnectionState().PeerCertificates[0]
	path := filepath.Join(filepath.Dir(s.binary), "server.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o644); err != nil {
		s.t.Fatal(err)
	}
	mustChmod(s.t, path, 0o644)
	return path
}

// TestStoreFilesArePrivate: after serve starts on a fresh home, the home and
// credential directories are 0700 and every store file is 0600; a serve on
// a home whose talaria.db is 0644 warns with the fix.
func TestStoreFilesArePrivate(t *testing.T) {
	t.Parallel()
	model := fakellm.New()
	defer model.Close()
	u := newUser(t, model.URL())
	srv := u.serve(0)
	modes := map[string]os.FileMode{
		u.home:                              0o700 | os.ModeDir,
		filepath.Join(u.home, "tls"):        0o700 | os.ModeDir,
		engine.CredentialPath(u.home):       0o600,
		filepath.Join(u.home, "serve.json"): 0o600,
	}
	for _, db := range []string{filepath.Join(u.home, "talaria.db"), filepath.Join(u.home, "temporal", "temporal.db"),
		filepath.Join(u.home, "temporal", "visibility.db")} {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			modes[db+suffix] = 0o600
		}
	}
	for path, want := range modes {
		info, err := os.Stat(path)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if got := info.Mode() & (os.ModeDir | os.ModePerm); got != want {
			t.Errorf("%s has mode %v, want %v", path, got, want)
		}
	}
	if strings.Contains(srv.stderr.String(), "other users can read") {
		t.Errorf("a fresh home warned about its permissions:\n%s", srv.stderr.String())
	}
	if err := srv.stop(t); err != nil {
		t.Fatalf("serve: %v", err)
	}

	db := filepath.Join(u.home, "talaria.db")
	mustChmod(t, db, 0o644)
	srv = u.serve(0)
	out := srv.stderr.String()
	if !strings.Contains(out, "other users can read") || !strings.Contains(out, "chmod 600 "+db) {
		t.Fatalf("serve did not warn about the 0644 %s with the fix:\n%s", db, out)
	}
	t.Logf("serve's stderr:\n%s", out)
}

func mustChmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// copyExecutable copies the file at src to dst with mode 0755.
func copyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := errors.Join(out.Chmod(0o755), out.Close()); err != nil {
		t.Fatal(err)
	}
}
