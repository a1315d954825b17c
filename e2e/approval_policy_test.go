package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestDenyModeRefusesObfuscatedDeletes: with approvals.mode deny, every
// disguised form of "rm -rf ./victim" the model sends is refused before it
// runs: ./victim survives and the model reads a refusal for each call.
func TestDenyModeRefusesObfuscatedDeletes(t *testing.T) {
	t.Parallel()
	encoded := base64.StdEncoding.EncodeToString([]byte("rm -rf ./victim"))
	commands := []string{
		`X=rm; $X -rf ./victim`,
		`$'\x72\x6d' -rf ./victim`,
		`rm${IFS}-rf${IFS}./victim`,
		`echo ` + encoded + ` | base64 -d | sh`,
		`bash -c 'rm -rf ./victim'`,
		`find ./victim -delete`,
		`{rm,-rf,./victim}`,
		`$(echo rm) -rf ./victim`,
	}
	calls := make([]fakellm.ToolCall, len(commands))
	for i, c := range commands {
		calls[i] = fakellm.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "terminal", Arguments: jsonObject(t, map[string]any{"command": c})}
	}
	model := fakellm.New(fakellm.ToolStep(calls...), fakellm.TextStep("I could not delete it."))
	defer model.Close()
	u := newUser(t, model.URL())
	u.denyApprovals()
	victim := filepath.Join(u.workdir, "victim")
	if err := os.MkdirAll(filepath.Join(victim, "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(victim, "inner", "data.txt"), []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, stderr, code := u.chatJSON(3*time.Minute, "-q", "delete ./victim")
	if code != 0 || !res.Completed {
		t.Fatalf("chat: exit %d, result %+v\n%s", code, res, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(victim, "inner", "data.txt")); err != nil || string(b) != "keep me" {
		t.Fatalf("./victim was touched: %q, %v", b, err)
	}
	reqs := model.Requests()
	last := reqs[len(reqs)-1].Body.Messages
	results := map[string]string{}
	for _, m := range last {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	for i, c := range commands {
		got := results[fmt.Sprintf("c%d", i)]
		if !strings.HasPrefix(got, "NOT APPROVED") && !strings.HasPrefix(got, "BLOCKED") {
			t.Errorf("%s: the model read %q, want a refusal", c, got)
		}
	}
}

// jsonObject encodes v as the argument text of a tool call.
func jsonObject(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServePolicyBoundsTheSender: the approval mode is the serving
// process's. A client that asks for --yolo (approvals off) against a serve
// configured to deny gets its dangerous command refused.
func TestServePolicyBoundsTheSender(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "y1", Name: "terminal", Arguments: `{"command":"rm -rf ./victim"}`}),
		fakellm.TextStep("It was refused."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	u.denyApprovals()
	victim := filepath.Join(u.workdir, "victim")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	u.serve(freePort(t))
	res, stderr, code := u.chatJSON(2*time.Minute, "--yolo", "-q", "delete ./victim")
	if code != 0 || !res.Completed {
		t.Fatalf("chat: exit %d, result %+v\n%s", code, res, stderr)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("--yolo widened serve's deny: %v", err)
	}
	if !strings.Contains(stderr, "--yolo") {
		t.Errorf("chat did not say that --yolo does not apply; stderr:\n%s", stderr)
	}
	reqs := model.Requests()
	for _, m := range reqs[len(reqs)-1].Body.Messages {
		if m.Role == "tool" && !strings.HasPrefix(m.Content, "NOT APPROVED") {
			t.Errorf("the model read %q, want a refusal", m.Content)
		}
	}
}

// TestSessionGrantCoversOneCommand: approving "rm -rf ./build" for the
// session lets that very command run again without asking, but not a
// delete of another target, and never a blocked command.
func TestSessionGrantCoversOneCommand(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "g1", Name: "terminal", Arguments: `{"command":"rm -rf ./build"}`}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "g2", Name: "terminal", Arguments: `{"command":"mkdir build && rm -fr ./build/ && echo again"}`}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "g3", Name: "terminal", Arguments: `{"command":"rm -rf ./src"}`}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "g4", Name: "terminal", Arguments: `{"command":"find / -delete"}`}),
		fakellm.TextStep("Done."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	u.waitForPeople() // answered from another process
	for _, d := range []string{"build", "src"} {
		if err := os.MkdirAll(filepath.Join(u.workdir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	u.serve(freePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wait := u.background(ctx, "chat", "--json", "-q", "clean", "--session", "grant")
	p := u.waitPending("grant")
	if p.PendingApproval == nil || p.PendingApproval.Command != "rm -rf ./build" {
		t.Fatalf("first pending = %+v", p)
	}
	if out, stderr, code := u.run(time.Minute, "approve", "grant", "--session"); code != 0 {
		t.Fatalf("approve --session: exit %d %s%s", code, out, stderr)
	}
	// The same delete again runs without asking; ./src is asked about.
	p = u.waitPending("grant")
	if p.PendingApproval == nil || p.PendingApproval.Command != "rm -rf ./src" {
		t.Fatalf("second pending = %+v (the grant must cover rm -rf ./build only)", p)
	}
	if out, stderr, code := u.run(time.Minute, "deny", "grant"); code != 0 {
		t.Fatalf("deny: exit %d %s%s", code, out, stderr)
	}
	stdout, stderr, code := wait()
	res := decodeResult(t, stdout, stderr)
	if code != 0 || !res.Completed {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	results := map[string]string{}
	for _, m := range res.Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	if !strings.Contains(results["g2"], "again") || !strings.HasPrefix(results["g3"], "DENIED") || !strings.HasPrefix(results["g4"], "BLOCKED") {
		t.Fatalf("results = %q", results)
	}
	if _, err := os.Stat(filepath.Join(u.workdir, "src")); err != nil {
		t.Fatal("./src was deleted under a grant for ./build")
	}
}

// denyApprovals writes a config.yaml that refuses dangerous commands.
func (u *user) denyApprovals() {
	u.t.Helper()
	if err := os.MkdirAll(u.home, 0o700); err != nil {
		u.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(u.home, "config.yaml"), []byte("approvals:\n  mode: deny\n"), 0o600); err != nil {
		u.t.Fatal(err)
	}
}

// TestSenderConfigCannotWidenServePolicy: a sender holding the owner's
// credential, with a configuration of its own that turns approvals off,
// sends to a serve configured to deny: the serve's policy decides.
func TestSenderConfigCannotWidenServePolicy(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "s1", Name: "terminal", Arguments: `{"command":"rm -rf ./victim"}`}),
		fakellm.TextStep("It was refused."),
	)
	defer model.Close()
	owner := newUser(t, model.URL())
	owner.denyApprovals()
	owner.serve(freePort(t))
	info, err := engine.ReadServeInfo(owner.home)
	if err != nil {
		t.Fatal(err)
	}

	sender := newUser(t, model.URL())
	if err := os.MkdirAll(sender.home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sender.home, "config.yaml"), []byte("approvals:\n  mode: off\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cred := engine.CredentialPath(owner.home)
	for k, v := range map[string]string{"TEMPORAL_ADDRESS": info.TemporalAddress, "TALARIA_DB": info.DB,
		"TEMPORAL_TLS_CERT": cred, "TEMPORAL_TLS_KEY": cred, "TEMPORAL_TLS_CA": cred, "TEMPORAL_TLS_SERVER_NAME": "localhost"} {
		sender.env[k] = v
	}
	victim := filepath.Join(sender.workdir, "victim")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := sender.run(time.Minute, "send", "widen", "delete ./victim"); code != 0 {
		t.Fatalf("send: exit %d %s%s", code, out, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := model.WaitFinished(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("the sender's approvals.mode: off widened serve's deny: %v", err)
	}
	last, _ := model.Requests()[1].LastMessage()
	if last.Role != "tool" || !strings.HasPrefix(last.Content, "NOT APPROVED") {
		t.Fatalf("the model read %+v, want a refusal", last)
	}
}
