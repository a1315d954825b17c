package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/tools"
)

func TestEnabledTools(t *testing.T) {
	t.Parallel()
	all := []tools.Tool{tools.ReadFile, tools.WriteFile, tools.Terminal, tools.Todo}
	cases := []struct {
		enabled, disabled []string
		want              string
		err               bool
	}{
		{nil, nil, "read_file write_file terminal todo", false},
		{[]string{"todo", "read_file"}, nil, "read_file todo", false},
		{[]string{"read_file", "read_file"}, nil, "read_file", false},
		{[]string{"file"}, nil, "read_file write_file", false},
		{[]string{"file", "shell"}, []string{"write_file"}, "read_file terminal", false},
		{nil, []string{"shell", "planning"}, "read_file write_file", false},
		{[]string{"bash"}, nil, "", true},
		{nil, []string{"bash"}, "", true},
	}
	for _, c := range cases {
		got, err := enabledTools(c.enabled, c.disabled, all...)
		if c.err {
			if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), `"bash"`) {
				t.Errorf("%v: err = %v, want a configuration error naming the tool", c.enabled, err)
			}
			continue
		}
		var names []string
		for _, tl := range got {
			names = append(names, tl.Name())
		}
		if err != nil || strings.Join(names, " ") != c.want {
			t.Errorf("%v: %v %v, want %s", c.enabled, names, err, c.want)
		}
	}
}

// TestToolsEnabledBoundsTheTurn: with tools.enabled set, the worker neither
// offers nor runs any other tool, whatever the model calls.
func TestToolsEnabledBoundsTheTurn(t *testing.T) {
	t.Parallel()
	l := newLoopRun(t, []fakellm.Step{
		fakellm.ToolStep(fakellm.ToolCall{Name: "terminal", Arguments: `{"command":"touch ran.txt"}`}),
		fakellm.TextStep("I cannot run commands here."),
	}, func(c *config.Config, _ *Options) { c.Tools.Enabled = []string{"read_file", "todo"} })
	l.turn("s", "make a file")
	if _, err := os.Stat(filepath.Join(l.workdir, "ran.txt")); err == nil {
		t.Fatal("a tool outside tools.enabled ran")
	}
	for _, tl := range l.model.Requests()[0].Body.Tools {
		if name := tl.Function.Name; name != "read_file" && name != "todo" {
			t.Errorf("offered %s", name)
		}
	}
}

func TestToolPolicy(t *testing.T) {
	t.Parallel()
	cfg := config.Default("/h")
	cfg.Model.APIKey = "sk-1"
	cfg.Terminal.EnvPassthrough = []string{"GOPATH", "SMTP_PASSWORD", "IMAP_PASSWORD"}
	cfg.Delivery.SMTP.PasswordEnv = "SMTP_PASSWORD"
	cfg.Gateway.Email.IMAP.PasswordEnv = "IMAP_PASSWORD"
	cfg.Tools.WriteRoots = []string{"/srv/out"}
	cfg.Tools.ReadRoots = []string{"/srv"}
	p := ToolPolicy(cfg)
	if p.Home != "/h" || len(p.EnvPassthrough) != 1 || p.EnvPassthrough[0] != "GOPATH" || p.WriteRoots[0] != "/srv/out" || p.ReadRoots[0] != "/srv" {
		t.Fatalf("%+v", p)
	}
	if !strings.Contains(strings.Join(p.Secrets, " "), "sk-1") || !strings.Contains(strings.Join(p.SecretFiles, " "), "/h/talaria.db") {
		t.Fatalf("secrets %v files %v", p.Secrets, p.SecretFiles)
	}
}
