package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// workdirFixture is a home directory (also $HOME) holding Talaria's home,
// keys and a project, and a separate working directory with a write root.
type workdirFixture struct {
	base, home, talaria, work, extra, outside string
}

func newWorkdirFixture(t *testing.T) workdirFixture {
	t.Helper()
	base := t.TempDir()
	f := workdirFixture{
		base:    base,
		home:    filepath.Join(base, "home"),
		talaria: filepath.Join(base, "home", ".talaria"),
		work:    filepath.Join(base, "work"),
		extra:   filepath.Join(base, "extra"),
		outside: filepath.Join(base, "outside"),
	}
	for _, d := range []string{f.talaria, f.work, f.extra, f.outside,
		filepath.Join(f.home, ".ssh"), filepath.Join(f.home, "proj", ".git", "hooks"), filepath.Join(f.work, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"out": f.outside, "homelink": f.home, "in": "sub"} {
		if err := os.Symlink(target, filepath.Join(f.work, name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", f.home)
	return f
}

// TestTerminalWorkdirRoots: a workdir runs only when it resolves under the
// working directory or a write root, and not into a protected directory;
// a refused one runs nothing.
func TestTerminalWorkdirRoots(t *testing.T) {
	f := newWorkdirFixture(t)
	inWork := Env{Workdir: f.work, Policy: Policy{Home: f.talaria, WriteRoots: []string{f.extra}}}
	inHome := Env{Workdir: f.home, Policy: Policy{Home: f.talaria}}
	tests := []struct {
		name    string
		env     Env
		workdir string
		ranIn   string // where the command ran; "" when refused
		wantErr error
	}{
		{"no workdir", inWork, "", f.work, nil},
		{"dot", inWork, ".", f.work, nil},
		{"relative", inWork, "sub", filepath.Join(f.work, "sub"), nil},
		{"symlink inside", inWork, "in", filepath.Join(f.work, "sub"), nil},
		{"write root", inWork, f.extra, f.extra, nil},
		{"home", inWork, "~", "", ErrOutsideRoots},
		{"talaria home", inWork, "~/.talaria", "", ErrOutsideRoots},
		{"parent", inWork, "..", "", ErrOutsideRoots},
		{"relative escape", inWork, "../outside", "", ErrOutsideRoots},
		{"symlink outside", inWork, "out", "", ErrOutsideRoots},
		{"symlink to home", inWork, "homelink", "", ErrOutsideRoots},
		{"absolute elsewhere", inWork, f.outside, "", ErrOutsideRoots},
		{"system directory", inWork, "/etc", "", ErrOutsideRoots},
		{"project in home", inHome, "proj", filepath.Join(f.home, "proj"), nil},
		{"talaria home under the working directory", inHome, "~/.talaria", "", ErrProtectedPath},
		{"ssh directory", inHome, ".ssh", "", ErrProtectedPath},
		{"git hooks", inHome, "proj/.git/hooks", "", ErrProtectedPath},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			marker := "ran-" + strings.ReplaceAll(tc.name, " ", "-")
			args := mustJSON(t, map[string]string{"command": "pwd; touch " + filepath.Join(f.base, marker), "workdir": tc.workdir})
			out, err := runTool(t, Terminal, tc.env, args)
			_, statErr := os.Stat(filepath.Join(f.base, marker))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v (output %s)", err, tc.wantErr, out)
				}
				if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "nothing was run") {
					t.Errorf("refusal is not one line saying nothing ran: %q", err)
				}
				if statErr == nil {
					t.Error("the command ran")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := decode[terminalResult](t, out).Output; got != tc.ranIn+"\n" {
				t.Errorf("ran in %q, want %q", got, tc.ranIn)
			}
		})
	}
}

// TestTerminalWorkdirAtSlash: with the working directory at /, a workdir
// runs only under a write root, or anywhere when / is one.
func TestTerminalWorkdirAtSlash(t *testing.T) {
	f := newWorkdirFixture(t)
	args := mustJSON(t, map[string]string{"command": "pwd", "workdir": f.extra})
	if _, err := runTool(t, Terminal, Env{Workdir: "/"}, args); !errors.Is(err, ErrOutsideRoots) {
		t.Errorf("workdir under / ran: %v", err)
	}
	for _, roots := range [][]string{{f.extra}, {"/"}} {
		if _, err := runTool(t, Terminal, Env{Workdir: "/", Policy: Policy{WriteRoots: roots}}, args); err != nil {
			t.Errorf("write roots %v: %v", roots, err)
		}
	}
}

// TestTerminalCall: TerminalCall decodes what the tool runs, and refuses
// what the tool refuses.
func TestTerminalCall(t *testing.T) {
	tests := []struct {
		raw, command, workdir string
		ok                    bool
	}{
		{`{"command":"ls"}`, "ls", "", true},
		{`{"command":"ls","workdir":"~"}`, "ls", "~", true},
		{`{"command":"ls","workdir":"  "}`, "ls", "", true},
		{`{"command":"ls","workdir":"a","timeout":5}`, "ls", "a", true},
		{`{"command":"ls","workdir":"a","Workdir":"b"}`, "", "", false},
		{`{"command":"ls","WORKDIR":"~"}`, "", "", false},
		{`{"command":"ls","workdir":7}`, "", "", false},
		{`{"command":"ls","timeout":-1}`, "", "", false},
		{`{"command":""}`, "", "", false},
	}
	for _, tt := range tests {
		c, w, ok := TerminalCall(tt.raw)
		if c != tt.command || w != tt.workdir || ok != tt.ok {
			t.Errorf("TerminalCall(%s) = %q, %q, %v; want %q, %q, %v", tt.raw, c, w, ok, tt.command, tt.workdir, tt.ok)
		}
	}
}

func TestTerminalAssessText(t *testing.T) {
	t.Setenv("HOME", "/home/al")
	tests := []struct{ command, workdir, want string }{
		{"ls", "", "ls"},
		{"ls", ".", "ls"},
		{"ls", "  ", "ls"},
		{"rm -rf *", "/", "cd '/' && rm -rf *"},
		{"echo x >> .bashrc", "~", "cd '/home/al' && echo x >> .bashrc"},
		{"cp evil config.yaml", "~/.talaria", "cd '/home/al/.talaria' && cp evil config.yaml"},
		{"ls", "~other", "cd '~other' && ls"},
		{"ls", "sub dir", "cd 'sub dir' && ls"},
		{"ls", "it's", `cd 'it'\''s' && ls`},
		{"ls", "$(rm -rf /)", "cd '$(rm -rf /)' && ls"},
	}
	for _, tt := range tests {
		if got := TerminalAssessText(tt.command, tt.workdir); got != tt.want {
			t.Errorf("TerminalAssessText(%q, %q) = %q, want %q", tt.command, tt.workdir, got, tt.want)
		}
	}
}

func TestRunScript(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("OPENAI_API_KEY", "sk-test-secret-value")
	t.Setenv("SOME_TOKEN", "sk-test-secret-value")
	t.Setenv("PASSED_EXTRA", "yes")
	p := Policy{Secrets: []string{"sk-test-secret-value"}, EnvPassthrough: []string{"PASSED_EXTRA", "SOME_TOKEN"}}
	tests := []struct {
		name, script, dir string
		timeout           time.Duration
		maxChars          int
		output            string
		exit              int
		wantErr           error
		errHas            string
	}{
		{name: "output and status", script: "echo hi; echo err >&2; exit 3", output: "hi\nerr\n", exit: 3},
		{name: "runs in dir", script: "pwd", output: dir + "\n"},
		{name: "environment allowlist", script: `echo "k=$OPENAI_API_KEY t=$SOME_TOKEN e=$PASSED_EXTRA"`, output: "k= t= e=yes\n"},
		{name: "output capped", script: "printf '%0100d' 0", maxChars: 20, output: strings.Repeat("0", 10) + omittedMarker(80) + strings.Repeat("0", 10)},
		{name: "timeout", script: "echo started; sleep 30", timeout: 300 * time.Millisecond, output: "started\n", exit: 143, wantErr: ErrTimedOut},
		{name: "missing dir", script: "true", dir: filepath.Join(dir, "nope"), exit: -1, wantErr: os.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := dir
			if tc.dir != "" {
				d = tc.dir
			}
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			out, code, err := RunScript(context.Background(), tc.script, d, timeout, tc.maxChars, p)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if out != tc.output || code != tc.exit {
				t.Errorf("got %q, %d; want %q, %d", out, code, tc.output, tc.exit)
			}
		})
	}
}

func TestRunScriptCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	marker := filepath.Join(t.TempDir(), "ran")
	if _, _, err := RunScript(ctx, "touch "+marker, t.TempDir(), time.Second, 0, Policy{}); !errors.Is(err, ErrCancelled) {
		t.Errorf("err = %v, want ErrCancelled", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a cancelled script ran")
	}
}
