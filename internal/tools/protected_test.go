package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteProtectedWhereverTheWorkdirIs: start-up files, programs on the
// PATH and a repository's hooks are never written, also when the working
// directory is the home directory or was swapped for a link to it.
func TestWriteProtectedWhereverTheWorkdirIs(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	work := filepath.Join(base, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	swapped := filepath.Join(base, "swapped") // a working directory now a link to home
	if err := os.Symlink(home, swapped); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	policy := Policy{Home: filepath.Join(home, ".talaria")}
	tests := []struct {
		workdir, path string
		protected     bool
	}{
		{home, ".bash_aliases", true},
		{home, ".bash_logout", true},
		{home, ".bashrc", true},
		{home, ".zlogout", true},
		{home, ".pam_environment", true},
		{home, ".vimrc", true},
		{home, ".inputrc", true},
		{home, ".xprofile", true},
		{home, ".bash_history", true},
		{home, ".my.cnf", true},
		{home, ".local/bin/ls", true},
		{home, "bin/git", true},
		{home, ".config/autostart/x.desktop", true},
		{home, ".config/systemd/user/x.service", true},
		{home, ".config/fish/config.fish", true},
		{home, ".config/git/config", true},
		{home, ".config/gh/hosts.yml", true},
		{home, ".azure/config", true},
		{home, ".terraform.d/credentials.tfrc.json", true},
		{home, ".ssh/authorized_keys", true},
		{home, ".talaria/SOUL.md", true},
		{swapped, ".bashrc", true},
		{swapped, ".local/bin/ls", true},
		{swapped, "notes.txt", false},
		{home, "notes.txt", false},
		{home, ".local/share/x", true},
		{home, ".bashrc.d/x.sh", true},
		{home, ".config/zsh/.zshrc", true},
		{home, ".oh-my-zsh/custom/x.zsh", true},
		{home, ".local/share/systemd/user/x.service", true},
		{home, ".config/Code/User/settings.json", true},
		{home, "project/.env", false},
		{home, "project/bin/tool", false},
		{work, ".git/hooks/pre-commit", true},
		{work, ".git/config", true},
		{work, "vendor/lib/.git/hooks/post-checkout", true},
		{work, "vendor/lib/.git/config", true},
		{work, ".git/commondir", true},
		{work, ".git/worktrees/w/commondir", true},
		{work, "sub/.git", true},
		{work, "notes.git", false},
		{work, ".git/info/exclude", true}, // git data: written by git, in the sandbox
		{work, ".gitignore", false},
		{work, ".github/workflows/ci.yml", false},
		{work, "config", false},
		{work, "bin/tool", false},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.workdir)+"/"+tt.path, func(t *testing.T) {
			env := Env{Workdir: tt.workdir, Policy: policy}
			_, err := runTool(t, WriteFile, env, mustJSON(t, map[string]string{"path": tt.path, "content": "x"}))
			if tt.protected != errors.Is(err, ErrProtectedPath) {
				t.Fatalf("write %s in %s: %v, protected want %v", tt.path, tt.workdir, err, tt.protected)
			}
			if !tt.protected && err != nil {
				t.Fatal(err)
			}
			if _, statErr := os.Lstat(filepath.Join(tt.workdir, tt.path)); tt.protected && statErr == nil {
				t.Error("the file was written")
			}
		})
	}
}

// TestWriteInAHomeDotDirectoryTheOwnerOpened: a write root the owner
// configured inside a home's dot directory is written; the rest of it is
// not.
func TestWriteInAHomeDotDirectoryTheOwnerOpened(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	app := filepath.Join(home, ".config", "myapp")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	env := Env{Workdir: home, Policy: Policy{Home: filepath.Join(home, ".talaria"), WriteRoots: []string{app}}}
	for path, protected := range map[string]bool{".config/myapp/settings.json": false, ".config/other/settings.json": true} {
		_, err := runTool(t, WriteFile, env, mustJSON(t, map[string]string{"path": path, "content": "x"}))
		if protected != errors.Is(err, ErrProtectedPath) || !protected && err != nil {
			t.Errorf("write %s: %v, protected want %v", path, err, protected)
		}
	}
}

// TestWriteAtSlash: a working directory that is / gives no write access
// unless / is a write root.
func TestWriteAtSlash(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "x.txt")
	tests := []struct {
		name  string
		roots []string
		ok    bool
	}{
		{"no roots", nil, false},
		{"another root", []string{filepath.Join(dir, "other")}, false},
		{"root holding the file", []string{dir}, true},
		{"slash listed", []string{"/"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := Env{Workdir: "/", Policy: Policy{WriteRoots: tt.roots}}
			_, err := runTool(t, WriteFile, env, mustJSON(t, map[string]string{"path": target, "content": "x"}))
			if tt.ok != (err == nil) {
				t.Fatalf("err = %v, want ok %v", err, tt.ok)
			}
			if !tt.ok && (!errors.Is(err, ErrOutsideRoots) || !strings.Contains(err.Error(), "tools.write_roots")) {
				t.Errorf("refusal %v does not say why", err)
			}
		})
	}
}

// TestReadFileHardLinks: a hard link to a protected file is refused like
// the file; other hard links read normally.
func TestReadFileHardLinks(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	talaria := filepath.Join(home, ".talaria")
	work := filepath.Join(home, "work")
	t.Setenv("HOME", home)
	files := map[string]string{
		filepath.Join(home, ".ssh/id_ed25519"):                "PRIVATE KEY",
		filepath.Join(home, ".ssh/id_ed25519.pub"):            "ssh-ed25519 AAAA",
		filepath.Join(home, ".aws/credentials"):               "aws_secret",
		filepath.Join(home, ".gnupg/private-keys-v1.d/k.key"): "gpg",
		filepath.Join(talaria, "config.yaml"):                 "api_key: sk",
		filepath.Join(talaria, "tls/talaria.pem"):             "PEM",
		filepath.Join(base, "named.key"):                      "named secret",
		filepath.Join(base, "plain.txt"):                      "plain",
	}
	for p, content := range files {
		writeTestFile(t, filepath.Dir(p), filepath.Base(p), content)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	env := Env{Workdir: work, Policy: Policy{Home: talaria, SecretFiles: []string{filepath.Join(base, "named.key")}}}
	tests := []struct {
		name, target string
		protected    bool
	}{
		{"ssh key", filepath.Join(home, ".ssh/id_ed25519"), true},
		{"aws credentials", filepath.Join(home, ".aws/credentials"), true},
		{"gnupg tree", filepath.Join(home, ".gnupg/private-keys-v1.d/k.key"), true},
		{"talaria config", filepath.Join(talaria, "config.yaml"), true},
		{"talaria credential", filepath.Join(talaria, "tls/talaria.pem"), true},
		{"configured secret file", filepath.Join(base, "named.key"), true},
		{"public key", filepath.Join(home, ".ssh/id_ed25519.pub"), false},
		{"ordinary file", filepath.Join(base, "plain.txt"), false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			link := filepath.Join(work, "link"+string(rune('a'+i))+".txt")
			if err := os.Link(tt.target, link); err != nil {
				t.Skipf("hard links unavailable: %v", err)
			}
			out, err := runTool(t, ReadFile, env, mustJSON(t, map[string]string{"path": link}))
			if tt.protected {
				if !errors.Is(err, ErrProtectedPath) || !strings.Contains(err.Error(), "hard link") {
					t.Fatalf("read %s: %v, want a hard-link refusal (output %s)", link, err, out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r := decode[readFileResult](t, out); !strings.Contains(r.Content, files[tt.target]) {
				t.Errorf("content %q", r.Content)
			}
		})
	}
}

// TestMayBeCredentialCoversEveryPattern: the quick test lets through every
// path a credential pattern can match, so skipping the patterns for the
// rest changes nothing.
func TestMayBeCredentialCoversEveryPattern(t *testing.T) {
	for _, p := range credentialPatterns {
		path := p
		if !strings.HasPrefix(p, "/") {
			path = "/home/ada/" + p
		}
		if !mayBeCredential(path) {
			t.Errorf("mayBeCredential(%q) = false for the pattern %q", path, p)
		}
	}
	if mayBeCredential("/home/ada/src/app/main.go") {
		t.Error("a plain source file needs the slow check")
	}
}
