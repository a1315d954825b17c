package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rootsFixture is a working directory with links leading out of it, an
// outside directory, and a $TALARIA_HOME.
type rootsFixture struct {
	work, outside, extra, home string
}

func newRootsFixture(t *testing.T) rootsFixture {
	t.Helper()
	base := t.TempDir()
	f := rootsFixture{
		work:    filepath.Join(base, "work"),
		outside: filepath.Join(base, "outside"),
		extra:   filepath.Join(base, "extra"),
		home:    filepath.Join(base, "home"),
	}
	for _, d := range []string{f.work, f.outside, f.extra, f.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"out":          f.outside,                           // a directory outside
		"outfile":      filepath.Join(f.outside, "new.txt"), // a dangling link outside
		"etc":          "/etc",
		"inner":        "sub",
		"home":         f.home,
		"relative-out": "../outside",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(f.work, name)); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, f.work, "sub/keep.txt", "keep")
	writeTestFile(t, f.home, "config.yaml", "model: {api_key: sk-secret}")
	writeTestFile(t, f.home, "talaria.db", "db")
	writeTestFile(t, f.home, "SOUL.md", "soul")
	writeTestFile(t, f.outside, "secret.txt", "outside")
	return f
}

func (f rootsFixture) env() Env {
	return Env{Workdir: f.work, Policy: Policy{Home: f.home, WriteRoots: []string{f.extra}}}
}

func TestWriteFileRoots(t *testing.T) {
	f := newRootsFixture(t)
	tests := []struct {
		name    string
		path    string
		wantErr error
		errHas  string
		lands   string // where an allowed write lands, relative to the fixture's base
	}{
		{name: "inside", path: "a/b.txt", lands: "work/a/b.txt"},
		{name: "link within the workdir", path: "inner/x.txt", lands: "work/sub/x.txt"},
		{name: "write root", path: filepath.Join(f.extra, "x.txt"), lands: "extra/x.txt"},
		{name: "dot-dot back inside", path: "sub/../y.txt", lands: "work/y.txt"},
		{name: "relative escape", path: "../outside/x.txt", wantErr: ErrOutsideRoots, errHas: "is outside the writable roots"},
		{name: "deep relative escape", path: "../../../../../../tmp/x.txt", wantErr: ErrOutsideRoots, errHas: "nothing was written"},
		{name: "absolute outside", path: filepath.Join(f.outside, "x.txt"), wantErr: ErrOutsideRoots, errHas: f.outside},
		{name: "etc", path: "/etc/talaria-test", wantErr: ErrOutsideRoots, errHas: "/etc/talaria-test is outside"},
		{name: "symlinked dir outside", path: "out/x.txt", wantErr: ErrOutsideRoots, errHas: "which resolves to " + filepath.Join(f.outside, "x.txt")},
		{name: "relative symlink outside", path: "relative-out/x.txt", wantErr: ErrOutsideRoots},
		{name: "dangling symlink outside", path: "outfile", wantErr: ErrOutsideRoots, errHas: filepath.Join(f.outside, "new.txt")},
		{name: "symlink to etc", path: "etc/passwd", wantErr: ErrOutsideRoots},
		{name: "talaria home through a link", path: "home/config.yaml", wantErr: ErrOutsideRoots},
		{name: "home dir", path: "~/.bashrc", wantErr: ErrOutsideRoots},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runTool(t, WriteFile, f.env(), mustJSON(t, map[string]string{"path": tt.path, "content": "written"}))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("write %s: %v (out %s), want %v mentioning %q", tt.path, err, out, tt.wantErr, tt.errHas)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("write %s: %v", tt.path, err)
			}
			landed := filepath.Join(filepath.Dir(f.work), tt.lands)
			if data, err := os.ReadFile(landed); err != nil || string(data) != "written" {
				t.Fatalf("%s holds %q, %v", landed, data, err)
			}
		})
	}
	// Nothing refused was written anywhere outside.
	for _, p := range []string{filepath.Join(f.outside, "x.txt"), filepath.Join(f.outside, "new.txt"), "/etc/talaria-test", "/tmp/x.txt"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(f.home, "config.yaml")); strings.Contains(string(data), "written") {
		t.Error("config.yaml was overwritten")
	}
}

func TestWriteFileProtected(t *testing.T) {
	f := newRootsFixture(t)
	userHome, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	tests := []struct {
		name   string
		env    Env
		path   string
		errHas string
	}{
		{"talaria config", Env{Workdir: f.home, Policy: Policy{Home: f.home}}, "config.yaml", "$TALARIA_HOME's secrets"},
		{"talaria database", Env{Workdir: f.home, Policy: Policy{Home: f.home}}, "talaria.db", "$TALARIA_HOME's secrets"},
		{"talaria identity", Env{Workdir: f.home, Policy: Policy{Home: f.home}}, "SOUL.md", "inside $TALARIA_HOME"},
		{"ssh key in the user's home", Env{Workdir: userHome, Policy: Policy{Home: f.home}}, ".ssh/authorized_keys", "shell start-up, credential or system file"},
		{"bashrc", Env{Workdir: userHome, Policy: Policy{Home: f.home}}, ".bashrc", "shell start-up"},
		{"configured secret file", Env{Workdir: f.work, Policy: Policy{Home: f.home, SecretFiles: []string{filepath.Join(f.work, "tls.key")}}}, "tls.key", "secret file named in the configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runTool(t, WriteFile, tt.env, mustJSON(t, map[string]string{"path": tt.path, "content": "x"}))
			if !errors.Is(err, ErrProtectedPath) || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("write %s: %v, want a protected-path refusal mentioning %q", tt.path, err, tt.errHas)
			}
		})
	}
	if data, _ := os.ReadFile(filepath.Join(f.home, "SOUL.md")); string(data) != "soul" {
		t.Errorf("SOUL.md holds %q", data)
	}
	// A write root inside $TALARIA_HOME opens that part of it.
	skills := filepath.Join(f.home, "skills")
	env := Env{Workdir: f.work, Policy: Policy{Home: f.home, WriteRoots: []string{skills}}}
	if _, err := runTool(t, WriteFile, env, mustJSON(t, map[string]string{"path": filepath.Join(skills, "a.md"), "content": "x"})); err != nil {
		t.Fatalf("write under a root inside $TALARIA_HOME: %v", err)
	}
}

func TestReadFileRoots(t *testing.T) {
	f := newRootsFixture(t)
	userHome, _ := os.UserHomeDir()
	tests := []struct {
		name    string
		env     Env
		path    string
		wantErr error
		errHas  string
	}{
		{"inside", f.env(), "sub/keep.txt", nil, ""},
		{"anywhere by default", f.env(), filepath.Join(f.outside, "secret.txt"), nil, ""},
		{"through a link by default", f.env(), "out/secret.txt", nil, ""},
		{"outside read roots", Env{Workdir: f.work, Policy: Policy{Home: f.home, ReadRoots: []string{f.extra}}},
			filepath.Join(f.outside, "secret.txt"), ErrOutsideRoots, "is outside the readable roots"},
		{"link out of read roots", Env{Workdir: f.work, Policy: Policy{Home: f.home, ReadRoots: []string{f.extra}}},
			"out/secret.txt", ErrOutsideRoots, "which resolves to"},
		{"talaria config", f.env(), filepath.Join(f.home, "config.yaml"), ErrProtectedPath, "$TALARIA_HOME's secrets"},
		{"talaria config through a link", f.env(), "home/config.yaml", ErrProtectedPath, "not read by tools"},
		{"talaria database", f.env(), filepath.Join(f.home, "talaria.db"), ErrProtectedPath, ""},
		{"talaria identity is readable", f.env(), filepath.Join(f.home, "SOUL.md"), nil, ""},
		{"embedded server credential", f.env(), filepath.Join(f.home, "tls", "talaria.pem"), ErrProtectedPath, "$TALARIA_HOME's secrets"},
		{"shadow", f.env(), "/etc/shadow", ErrProtectedPath, "a credential file"},
		{"worker environment", f.env(), "/proc/self/environ", ErrProtectedPath, "a credential file"},
		{"ssh key", f.env(), filepath.Join(userHome, ".ssh/id_ed25519"), ErrProtectedPath, "a credential file"},
		{"aws credentials", f.env(), "~/.aws/credentials", ErrProtectedPath, "a credential file"},
		{"netrc", f.env(), "/home/someone/.netrc", ErrProtectedPath, "a credential file"},
		{"gcloud", f.env(), "/root/.config/gcloud/application_default_credentials.json", ErrProtectedPath, ""},
		{"docker", f.env(), "~/.docker/config.json", ErrProtectedPath, ""},
		{"kube", f.env(), "~/.kube/config", ErrProtectedPath, ""},
		{"git credentials", f.env(), "~/.git-credentials", ErrProtectedPath, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runTool(t, ReadFile, tt.env, mustJSON(t, map[string]string{"path": tt.path}))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("read %s: %v", tt.path, err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("read %s: %v (out %.80s), want %v mentioning %q", tt.path, err, out, tt.wantErr, tt.errHas)
			}
		})
	}
}

func TestRealPath(t *testing.T) {
	f := newRootsFixture(t)
	tests := []struct{ in, want string }{
		{filepath.Join(f.work, "sub/keep.txt"), filepath.Join(f.work, "sub/keep.txt")},
		{filepath.Join(f.work, "inner/keep.txt"), filepath.Join(f.work, "sub/keep.txt")},
		{filepath.Join(f.work, "out/a/b"), filepath.Join(f.outside, "a/b")},
		{filepath.Join(f.work, "outfile"), filepath.Join(f.outside, "new.txt")},
		{filepath.Join(f.work, "relative-out"), f.outside},
		{filepath.Join(f.work, "missing/deeper"), filepath.Join(f.work, "missing/deeper")},
	}
	for _, tt := range tests {
		got, err := realPath(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("realPath(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	loop := filepath.Join(f.work, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	if _, err := realPath(filepath.Join(loop, "x")); err == nil {
		t.Error("a symlink loop resolved")
	}
}

func TestMatchSegments(t *testing.T) {
	tests := []struct {
		path, pattern string
		want          bool
	}{
		{"/etc/shadow", "/etc/shadow", true},
		{"/etc/shadowx", "/etc/shadow", false},
		{"/proc/123/environ", "/proc/*/environ", true},
		{"/proc/123/task/4/environ", "/proc/*/environ", false},
		{".gnupg/private-keys-v1.d/k", ".gnupg/**", true},
		{".gnupg", ".gnupg/**", false},
		{".ssh/id_rsa", ".ssh/id_*", true},
	}
	for _, tt := range tests {
		if got := matchSegments(splitPath(tt.path), splitPath(tt.pattern)); got != tt.want {
			t.Errorf("match(%s, %s) = %v, want %v", tt.path, tt.pattern, got, tt.want)
		}
	}
}

// TestOpenReadableRechecksWhatOpened: a directory swapped for a symlink
// between the check and the open does not lead to a protected file.
func TestOpenReadableRechecksWhatOpened(t *testing.T) {
	f := newRootsFixture(t)
	secret := filepath.Join(f.outside, "secret.txt")
	env := Env{Workdir: f.work, Policy: Policy{Home: f.home, SecretFiles: []string{secret}}}
	// As checked: work/swapped/secret.txt, a plain path inside. Then
	// "swapped" became a link to the outside directory.
	if err := os.Symlink(f.outside, filepath.Join(f.work, "swapped")); err != nil {
		t.Fatal(err)
	}
	checked := checkedPath{Abs: filepath.Join(f.work, "swapped/secret.txt"), Real: filepath.Join(f.work, "swapped/secret.txt")}
	file, err := env.openReadable("read_file", checked)
	if err == nil {
		file.Close()
		t.Fatal("a swapped-in symlink reached a secret file")
	}
	if !errors.Is(err, ErrProtectedPath) {
		t.Fatalf("error %v, want a protected-path refusal", err)
	}
	// The last component is never followed.
	if err := os.Symlink(secret, filepath.Join(f.work, "last")); err != nil {
		t.Fatal(err)
	}
	if file, err := env.openReadable("read_file", checkedPath{Abs: "last", Real: filepath.Join(f.work, "last")}); err == nil {
		file.Close()
		t.Fatal("a symlink in the last component was followed")
	}
}
