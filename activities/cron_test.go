package activities

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
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

func TestClipMiddle(t *testing.T) {
	long := strings.Repeat("é", 400) + " && rm -rf ~"
	got := clipMiddle(long, 300, 200)
	if !strings.HasSuffix(got, "&& rm -rf ~") || !strings.Contains(got, "bytes not shown") || !utf8.ValidString(got) {
		t.Fatalf("clipMiddle = %q", got)
	}
	if got := clipMiddle("rm -rf ./build", 300, 200); got != "rm -rf ./build" {
		t.Fatalf("a short command changed: %q", got)
	}
	if got := clip(strings.Repeat("é", 10), 5); !utf8.ValidString(got) {
		t.Fatalf("clip cut a character: %q", got)
	}
}

// TestDeliverUnknownTarget: a target of a kind this worker does not deliver
// to is refused for good, naming the kinds it does deliver to.
func TestDeliverUnknownTarget(t *testing.T) {
	none := DelivererFunc(func(context.Context, turnapi.DeliverInput) (string, error) { return "", nil })
	a := &Activities{Deliverers: map[string]Deliverer{"telegram": none, "home": none, "email": none}}
	_, err := a.Deliver(context.Background(), turnapi.DeliverInput{Target: "pigeon:42"})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.NonRetryable() {
		t.Fatalf("Deliver = %v, want a non-retryable error", err)
	}
	if want := `unknown delivery target "pigeon:42" (this worker delivers to email:…, home, local, telegram:…, webhook:<url>)`; app.Message() != want {
		t.Fatalf("message = %q, want %q", app.Message(), want)
	}
}
