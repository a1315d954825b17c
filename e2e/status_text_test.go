package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// waitStatus polls `talaria status SESSION` (text) until it contains every
// one of want, and returns it.
func (u *user) waitStatus(session string, want ...string) string {
	u.t.Helper()
	var out, errOut string
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var code int
		out, errOut, code = u.run(time.Minute, "status", session)
		if code == 0 && containsAll(out, want...) {
			return out
		}
		time.Sleep(200 * time.Millisecond)
	}
	u.t.Fatalf("status %s never showed %q; last:\n%s%s", session, want, out, errOut)
	return ""
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// TestStatusTextTellsTheWholeStory: status (text) shows, one session after
// the other on one serve: a model call running and for how long; a pending
// approval with the command, its reason and the commands that answer it; a
// pending question with its choices and the answer command; a tool running
// (with its command) and for how long, and a steer waiting for it. status
// -o json (and --json) has the same with snake_case keys.
func TestStatusTextTellsTheWholeStory(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.Step{Text: "took my time", Delay: 6 * time.Second},
		fakellm.ToolStep(fakellm.ToolCall{ID: "d1", Name: "terminal", Arguments: `{"command":"rm -rf scratch-dir"}`}),
		fakellm.TextStep("Not deleting it."),
		fakellm.ToolStep(fakellm.ToolCall{ID: "q1", Name: "clarify", Arguments: `{"question":"Which colour should the button be?","choices":["red","blue"]}`}),
		fakellm.TextStep("Blue it is."),
		fakellm.ToolStep(fakellm.ToolCall{ID: "b1", Name: "terminal", Arguments: `{"command":"sleep 30"}`}),
	)
	defer model.Close()
	model.SetResponder(func(fakellm.Request) fakellm.Step { return fakellm.TextStep("anything else") })
	u := newUser(t, model.URL())
	if err := os.MkdirAll(filepath.Join(u.workdir, "scratch-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	u.serve(0)
	send := func(session, text string) {
		t.Helper()
		if out, errOut, code := u.run(time.Minute, "send", session, text); code != 0 {
			t.Fatalf("send %s: exit %d\n%s%s", session, code, out, errOut)
		}
	}

	// A model call running.
	send("slow", "take your time")
	st := u.waitStatus("slow", "  model call: attempt 1 of 6, running ")
	running := regexp.MustCompile(`  model call: attempt 1 of 6, running [1-9]\d*s\n`)
	for !running.MatchString(st) && !strings.Contains(st, "idle") {
		time.Sleep(500 * time.Millisecond)
		st, _, _ = u.run(time.Minute, "status", "slow")
	}
	t.Logf("slow:\n%s", st)
	if !running.MatchString(st) {
		t.Errorf("the model call's running time is not shown, or does not grow:\n%s", st)
	}
	u.waitStatus("slow", "session slow: idle")

	// An approval: the command, why, and how to answer.
	send("appr", "clean up")
	st = u.waitStatus("appr", "approval needed")
	t.Logf("appr:\n%s", st)
	for _, want := range []string{
		"  approval needed: rm -rf scratch-dir\n",
		"    reason:  ",
		"    approve: talaria approve appr ",
		"    deny:    talaria deny appr\n",
	} {
		if !strings.Contains(st, want) {
			t.Errorf("status lacks %q", want)
		}
	}
	if strings.Contains(st, "tool: ") {
		t.Errorf("a tool waiting for its approval is shown as running:\n%s", st)
	}
	if out, errOut, code := u.run(time.Minute, "deny", "appr"); code != 0 {
		t.Fatalf("deny: exit %d %s%s", code, out, errOut)
	}
	u.waitStatus("appr", "session appr: idle")

	// A question: its choices and how to answer.
	send("ask", "style the button")
	st = u.waitStatus("ask", "question:")
	t.Logf("ask:\n%s", st)
	if !strings.Contains(st, "  question: Which colour should the button be?\n    1. red\n    2. blue\n"+
		"    answer:  talaria answer ask \"YOUR ANSWER\"\n") {
		t.Errorf("status does not show the question, its choices and the answer command:\n%s", st)
	}
	if out, errOut, code := u.run(time.Minute, "answer", "ask", "blue"); code != 0 {
		t.Fatalf("answer: exit %d %s%s", code, out, errOut)
	}
	u.waitStatus("ask", "session ask: idle")

	// A tool running, and a steer waiting for the next model call.
	send("busy", "wait a bit")
	u.waitStatus("busy", "  tool: terminal `sleep 30`, running ")
	if out, errOut, code := u.run(time.Minute, "steer", "busy", "be brief\nand polite"); code != 0 {
		t.Fatalf("steer: exit %d %s%s", code, out, errOut)
	}
	time.Sleep(2 * time.Second)
	st = u.waitStatus("busy", `  steers pending: 1 — next: "be brief\nand polite"`)
	t.Logf("busy:\n%s", st)
	m := regexp.MustCompile("tool: terminal `sleep 30`, running (\\d+)s").FindStringSubmatch(st)
	if m == nil || m[1] == "0" || m[1] == "1" {
		t.Errorf("the tool's running time is not shown, or does not grow: %v\n%s", m, st)
	}

	// The same as JSON: -o json and --json, snake_case keys.
	for _, flags := range [][]string{{"-o", "json"}, {"--output=json"}, {"--json"}} {
		out, errOut, code := u.run(time.Minute, append([]string{"status", "busy"}, flags...)...)
		if code != 0 {
			t.Fatalf("status %v: exit %d %s", flags, code, errOut)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("status %v: not JSON: %v\n%s", flags, err, out)
		}
		if bad := nonSnake(v, ""); len(bad) > 0 {
			t.Errorf("status %v: keys not snake_case: %v\n%s", flags, bad, out)
		}
		var r struct {
			Current struct {
				What       string `json:"what"`
				Tool       string `json:"tool"`
				RunningFor string `json:"running_for"`
			} `json:"current"`
			Turn struct {
				Steers []string `json:"steers"`
			} `json:"turn"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Current.What != "tool" || r.Current.Tool != "terminal" ||
			r.Current.RunningFor == "" || len(r.Turn.Steers) != 1 || r.Turn.Steers[0] != "be brief\nand polite" {
			t.Errorf("status %v: %+v (%v)\n%s", flags, r, err, out)
		}
	}
	if _, errOut, code := u.run(time.Minute, "status", "busy", "-o", "yaml"); code != 2 || !strings.Contains(errOut, "yaml") {
		t.Errorf("status -o yaml: exit %d %s", code, errOut)
	}
	if _, _, code := u.run(time.Minute, "stop", "busy"); code != 0 {
		t.Fatalf("stop busy: exit %d", code)
	}
}

// nonSnake lists the keys of v that are not snake_case, but not inside the
// session's map of request ids (its keys are data).
func nonSnake(v any, path string) []string {
	var bad []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := strings.TrimPrefix(path+"."+k, ".")
			if !regexp.MustCompile(`^[a-z][a-z0-9_]*$`).MatchString(k) {
				bad = append(bad, p)
			}
			if p != "session.assigned" {
				bad = append(bad, nonSnake(e, p)...)
			}
		}
	case []any:
		for _, e := range x {
			bad = append(bad, nonSnake(e, path)...)
		}
	}
	return bad
}
