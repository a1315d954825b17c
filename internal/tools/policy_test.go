package tools

import (
	"slices"
	"strings"
	"testing"
)

func TestToolEnviron(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin:/bin", "HOME=/home/u", "LANG=C.UTF-8", "TERM=xterm", "USER=u", "SHELL=/bin/bash", "TMPDIR=/tmp", "TZ=UTC",
		"OPENAI_API_KEY=sk-live-123456789", "TALARIA_DB=postgres://u:pw@db/talaria", "TEMPORAL_TLS_KEY=/k.pem",
		"TEMPORAL_API_KEY=tk", "AWS_SECRET_ACCESS_KEY=aws", "GITHUB_TOKEN=ghp_x", "GOPATH=/go", "COPY_OF_KEY=sk-live-123456789",
		"WRAPPED=Bearer sk-live-123456789", "SHORT=ab", "MALFORMED",
		"PATH=/second/ignored",
	}
	secrets := []string{"sk-live-123456789", "postgres://u:pw@db/talaria", "ab"}
	tests := []struct {
		name        string
		passthrough []string
		want        []string
		absent      []string
	}{
		{name: "allowlist only",
			want:   []string{"PATH=/usr/bin:/bin", "HOME=/home/u", "LANG=C.UTF-8", "TERM=xterm", "USER=u", "SHELL=/bin/bash", "TMPDIR=/tmp", "TZ=UTC"},
			absent: []string{"OPENAI_API_KEY", "TALARIA_DB", "TEMPORAL_TLS_KEY", "TEMPORAL_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "GOPATH", "MALFORMED"}},
		{name: "passthrough adds names", passthrough: []string{"GOPATH", "GITHUB_TOKEN"},
			want: []string{"GOPATH=/go", "GITHUB_TOKEN=ghp_x"}},
		{name: "secret names are never passed", passthrough: []string{"OPENAI_API_KEY", "TALARIA_DB", "TEMPORAL_TLS_KEY", "TEMPORAL_API_KEY"},
			absent: []string{"OPENAI_API_KEY", "TALARIA_DB", "TEMPORAL_TLS_KEY", "TEMPORAL_API_KEY"}},
		{name: "a configured secret value is dropped whatever the name", passthrough: []string{"COPY_OF_KEY", "WRAPPED"},
			absent: []string{"COPY_OF_KEY", "WRAPPED"}},
		{name: "a short secret drops only an exact match", passthrough: []string{"SHORT"},
			absent: []string{"SHORT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ToolEnviron(environ, Policy{EnvPassthrough: tt.passthrough, Secrets: secrets})
			for _, w := range append(tt.want, fixedEnv...) {
				if !slices.Contains(got, w) {
					t.Errorf("missing %s in %v", w, got)
				}
			}
			for _, kv := range got {
				name, _, _ := strings.Cut(kv, "=")
				if slices.Contains(tt.absent, name) {
					t.Errorf("%s was passed", kv)
				}
				if strings.Contains(kv, "sk-live") || strings.Contains(kv, "pw@") {
					t.Errorf("a secret was passed: %s", kv)
				}
			}
			if slices.Contains(got, "PATH=/second/ignored") {
				t.Error("a repeated variable was passed twice")
			}
		})
	}
}

func TestPassedEnvNames(t *testing.T) {
	passed, refused := PassedEnvNames([]string{"GOPATH", "OPENAI_API_KEY", "TEMPORAL_TLS_CA", "PATH"})
	if !slices.Contains(passed, "GOPATH") || !slices.Contains(passed, "PATH") || slices.Contains(passed, "OPENAI_API_KEY") {
		t.Errorf("passed = %v", passed)
	}
	if !slices.Equal(refused, []string{"OPENAI_API_KEY", "TEMPORAL_TLS_CA"}) {
		t.Errorf("refused = %v", refused)
	}
	if n := len(slices.DeleteFunc(slices.Clone(passed), func(n string) bool { return n != "PATH" })); n != 1 {
		t.Errorf("PATH listed %d times", n)
	}
}

func TestTerminalEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
	t.Setenv("TALARIA_DB", "postgres://u:pw@h/db")
	t.Setenv("EXTRA_SETTING", "sk-test-0123456789")
	t.Setenv("PLAIN_SETTING", "plain")
	env := Env{Workdir: t.TempDir(), Policy: Policy{EnvPassthrough: []string{"EXTRA_SETTING", "PLAIN_SETTING", "OPENAI_API_KEY"}, Secrets: []string{"sk-test-0123456789"}}}
	out, err := runTool(t, Terminal, env, `{"command": "echo \"[$OPENAI_API_KEY][$TALARIA_DB][$EXTRA_SETTING][$PLAIN_SETTING][$PAGER]\"; env | grep -c sk-test || true"}`)
	if err != nil {
		t.Fatal(err)
	}
	r := decode[terminalResult](t, out)
	if want := "[][][][plain][cat]\n0\n"; r.Output != want {
		t.Errorf("output %q, want %q", r.Output, want)
	}
}
