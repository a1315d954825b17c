package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/memory"
)

// TestMemoryRecallByExpansion: with an auxiliary model configured, recall
// also searches the questions it writes like the turn's message, so a
// message sharing no word with a past session's summary still recalls
// it; with the auxiliary model failing, the same message recalls nothing
// and its turn goes on. The main model is never asked for expansions.
func TestMemoryRecallByExpansion(t *testing.T) {
	t.Parallel()
	w := &recallWorld{}
	model := fakellm.New(fakellm.WithResponder(w.respond))
	defer model.Close()
	const ask = "My deployment keeps dying during every rollout"
	ask1, ask2 := ask+" (first)", ask+" (second)"
	// The auxiliary model fails for the first probe and writes questions
	// about kubernetes for the second; the past sessions' own turns get
	// questions of no use.
	aux := fakellm.New(fakellm.WithResponder(func(r fakellm.Request) fakellm.Step {
		switch m, _ := r.LastMessage(); {
		case strings.Contains(m.Content, ask1):
			return fakellm.ErrorStep(500, "overloaded")
		case strings.Contains(m.Content, ask2):
			return fakellm.TextStep("1. Why does my kubernetes pod crash?\n2. How do I stop a pod crash loop?\n3. What restarts a container?")
		}
		return fakellm.TextStep("Nothing comes to mind.")
	}))
	defer aux.Close()
	u := newUser(t, model.URL())
	writeConfig("memory:\n  recall: true\n  prefetch_budget: 20s\nauxiliary:\n  base_url: "+aux.URL()+"\n  model: small-model\n")(t, u)
	u.serve(0)
	if out, _, code := u.run(time.Minute, "memory", "status"); code != 0 || !strings.Contains(out, "expansion:   questions from the auxiliary model small-model") {
		t.Fatalf("memory status does not name the auxiliary model:\n%s", out)
	}
	pastSessions(t, u)

	if _, stderr, code := u.run(2*time.Minute, "chat", "-q", ask1, "--session", "probe-1"); code != 0 {
		t.Fatalf("chat probe-1: exit %d\n%s", code, stderr)
	}
	if req := w.firstRequest(ask1); req == "" || strings.Contains(req, "Related past conversations") {
		t.Fatalf("with the auxiliary model failing, the message alone recalls nothing:\n%s", req)
	}
	if !logsContain(t, u, "the auxiliary model wrote no questions") {
		t.Fatal("no warning about the failed auxiliary model in the logs")
	}

	if _, stderr, code := u.run(2*time.Minute, "chat", "-q", ask2, "--session", "probe-2"); code != 0 {
		t.Fatalf("chat probe-2: exit %d\n%s", code, stderr)
	}
	req := w.firstRequest(ask2)
	if !strings.Contains(req, "SUMMARY-K8S") || !strings.Contains(req, "session k8s") {
		t.Fatalf("the expansion's words do not recall the kubernetes session:\n%s", req)
	}
	if strings.Contains(req, "SUMMARY-BREAD") || strings.Contains(req, "SUMMARY-TAX") {
		t.Fatalf("the first request recalls the other sessions:\n%s", req)
	}
	asked := 0
	for _, r := range aux.Requests() {
		if m, _ := r.LastMessage(); strings.Contains(m.Content, ask2) && strings.Contains(m.Content, memory.ExpansionPrompt) {
			asked++
		}
	}
	if asked != 1 {
		t.Fatalf("the auxiliary model was asked %d times for the second probe, want once", asked)
	}
	for _, r := range model.Requests() {
		if m, _ := r.LastMessage(); strings.Contains(m.Content, memory.ExpansionPrompt) {
			t.Fatal("the main model was asked for expansions")
		}
	}
	// The auxiliary model's calls are paid for: they show in usage.
	if out, stderr, code := u.run(time.Minute, "usage", "--session", "probe-2"); code != 0 || !strings.Contains(out, "small-model") {
		t.Fatalf("usage of probe-2: exit %d\n%s%s", code, out, stderr)
	}
}
