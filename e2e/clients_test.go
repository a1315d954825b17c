package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestStatusAndSessionsAgreeAcrossClients: `talaria status` and `talaria
// sessions list` print, with -o json, what the API answers for the same
// session: one engine answer for every client. The session is caught
// while its turn waits for an approval (a state that holds still); a
// session nobody knows is an exit 1 in the CLI and a 404 in the API.
func TestStatusAndSessionsAgreeAcrossClients(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.TextStep("hello"),
		fakellm.ToolStep(fakellm.ToolCall{ID: "a1", Name: "terminal", Arguments: `{"command":"rm -r old-dir"}`}),
		fakellm.TextStep("done"),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	u.waitForPeople()
	if err := os.MkdirAll(filepath.Join(u.workdir, "old-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, base := u.apiServe()
	if out, stderr, code := u.run(2*time.Minute, "chat", "-q", "hi", "--session", "greeted"); code != 0 {
		t.Fatalf("chat: exit %d %s%s", code, out, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wait := u.background(ctx, "chat", "-q", "clean up", "--session", "asking")
	if p := u.waitPending("asking"); p.PendingApproval == nil {
		t.Fatalf("the turn waits for %+v, want an approval", p)
	}

	same := func(what string, cli func() any, api func() any) {
		t.Helper()
		var c, a any
		for range 3 { // a read between two changes of state may differ once
			if c, a = cli(), api(); reflect.DeepEqual(c, a) {
				return
			}
		}
		cj, _ := json.MarshalIndent(c, "", " ")
		aj, _ := json.MarshalIndent(a, "", " ")
		t.Errorf("%s differs:\nCLI %s\nAPI %s", what, cj, aj)
	}
	cliJSON := func(args ...string) any {
		out, stderr, code := u.run(time.Minute, args...)
		var v any
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
			t.Fatalf("%v: exit %d %s%s", args, code, out, stderr)
		}
		return v
	}
	apiJSON := func(path string) any {
		var v any
		if status := apiCall(t, http.MethodGet, base+path, nil, &v); status != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, status, v)
		}
		return v
	}
	for _, s := range []string{"asking", "greeted"} {
		same("the status of "+s, func() any {
			st := cliJSON("status", s, "-o", "json").(map[string]any)
			delete(st, "ui") // the Web UI link carries the owner's token: the CLI's only
			return st
		},
			func() any { return apiJSON("/api/sessions/" + s + "/status") })
	}
	same("the sessions", func() any { return cliJSON("sessions", "list", "-o", "json") },
		func() any { return apiJSON("/api/sessions").(map[string]any)["data"] })

	if _, stderr, code := u.run(time.Minute, "status", "nobody-knows", "-o", "json"); code != 1 {
		t.Errorf("CLI status of an unknown session: exit %d %s, want 1", code, stderr)
	}
	var refusal map[string]any
	if status := apiCall(t, http.MethodGet, base+"/api/sessions/nobody-knows/status", nil, &refusal); status != http.StatusNotFound {
		t.Errorf("API status of an unknown session: %d %v, want 404", status, refusal)
	}
	if out, stderr, code := u.run(time.Minute, "deny", "asking"); code != 0 {
		t.Fatalf("deny: exit %d %s%s", code, out, stderr)
	}
	if _, stderr, code := wait(); code != 0 {
		t.Fatalf("the turn: exit %d %s", code, stderr)
	}
}
