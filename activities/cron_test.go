package activities

import (
	"context"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/tools"
)

// TestPreRunScriptEnvironment: a job's script inherits the tools'
// allowlist, never the worker's secrets, whatever it is named.
func TestPreRunScriptEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-worker-secret-0123456789")
	t.Setenv("TALARIA_DB", "postgres://u:pw@db/talaria")
	t.Setenv("INNOCENT_NAME", "sk-worker-secret-0123456789")
	t.Setenv("LANG", "C.UTF-8")
	a := &Activities{Policy: &tools.Policy{
		EnvPassthrough: []string{"INNOCENT_NAME", "OPENAI_API_KEY"},
		Secrets:        []string{"sk-worker-secret-0123456789"},
		Home:           t.TempDir(),
	}}
	out, err := a.PreRunScript(context.Background(), `echo "key=$OPENAI_API_KEY db=$TALARIA_DB other=$INNOCENT_NAME lang=$LANG"`, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out); got != "key= db= other= lang=C.UTF-8" {
		t.Fatalf("the script saw %q", got)
	}
}
