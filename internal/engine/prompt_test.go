package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// TestSystemPromptBuiltOnceAndReused: a session's system prompt comes from
// $TALARIA_HOME and the working directory at its first turn, and later turns
// send it byte for byte even after the files changed.
func TestSystemPromptBuiltOnceAndReused(t *testing.T) {
	t.Parallel()
	var home string
	l := newLoopRun(t, []fakellm.Step{fakellm.TextStep("one"), fakellm.TextStep("two")},
		func(c *config.Config, _ *Options) { home = c.Home })
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, "SOUL.md"), "You are Hermia, a careful release engineer.")
	write(filepath.Join(home, "memories", "MEMORY.md"), "The user deploys on Fridays.")
	write(filepath.Join(l.workdir, "AGENTS.md"), "Run make test before committing.")
	l.turn("p", "hello")
	write(filepath.Join(home, "memories", "MEMORY.md"), "Changed later: this must not appear.")
	l.turn("p", "again")
	reqs := l.model.Requests()
	first, second := reqs[0].Body.Messages[0], reqs[1].Body.Messages[0]
	if first.Role != "system" || first.Content != second.Content {
		t.Fatal("the second turn did not reuse the stored system prompt byte for byte")
	}
	for _, want := range []string{"Hermia", "deploys on Fridays", "Run make test before committing", "memory"} {
		if !strings.Contains(first.Content, want) {
			t.Fatalf("system prompt lacks %q:\n%s", want, first.Content)
		}
	}
	if strings.Contains(second.Content, "Changed later") {
		t.Fatal("the prompt was rebuilt")
	}
}

// TestMemoryFullReachesTheModel: adding to a full memory is refused with an
// error the model sees; the file is unchanged.
func TestMemoryFullReachesTheModel(t *testing.T) {
	t.Parallel()
	var home string
	big := strings.Repeat("x", 150)
	l := newLoopRun(t, []fakellm.Step{
		toolStep("memory", `{"action":"add","target":"memory","content":"`+big+`"}`),
		fakellm.TextStep("I will consolidate my notes first."),
	}, func(c *config.Config, _ *Options) { home = c.Home })
	path := filepath.Join(home, "memories", "MEMORY.md")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	existing := strings.Repeat("note ", 420) // ~2,100 characters: the new entry does not fit
	if err := os.WriteFile(path, []byte(existing), 0o644); err != nil {
		t.Fatal(err)
	}
	res := l.turn("m", "remember this")
	if !res.Completed {
		t.Fatalf("result = %+v", res)
	}
	last := l.lastSent(1)
	if last.Role != "tool" || !strings.Contains(strings.ToLower(last.Content), "full") {
		t.Fatalf("the model got %q", last.Content)
	}
	after, err := os.ReadFile(path)
	if err != nil || string(after) != existing {
		t.Fatal("the memory file changed")
	}
}

// TestSessionSearchTool: the model finds a phrase from a session three
// sessions back, with no model call involved in the search.
func TestSessionSearchTool(t *testing.T) {
	t.Parallel()
	l := newLoopRun(t, []fakellm.Step{
		fakellm.TextStep("Noted: the codename is blue heron."),
		fakellm.TextStep("ok"), fakellm.TextStep("ok"),
		toolStep("session_search", `{"query":"blue heron"}`),
		fakellm.TextStep("It was blue heron."),
	})
	l.turn("old", "the release codename is blue heron")
	l.turn("mid1", "lunch?")
	l.turn("mid2", "coffee?")
	res := l.turn("new", "what was the codename?")
	if !res.Completed {
		t.Fatalf("result = %+v", res)
	}
	last := l.lastSent(4)
	if last.Role != "tool" || !strings.Contains(last.Content, `"session_id":"old"`) || !strings.Contains(last.Content, "blue heron") {
		t.Fatalf("search result = %q", last.Content)
	}
	if len(l.model.Requests()) != 5 {
		t.Fatal("the search must not call the model")
	}
}

// TestMemoryReviewInBackground: after a turn, a review workflow updates the
// memory with the memory tool only; it does not delay the answer, and a
// failing review changes nothing about the turn.
func TestMemoryReviewInBackground(t *testing.T) {
	t.Parallel()
	var home string
	model := []fakellm.Step{fakellm.TextStep("Sure, dark mode it is.")}
	l := newLoopRun(t, model, func(c *config.Config, _ *Options) { home = c.Home })
	l.model.SetResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		switch {
		case last.Role == "tool":
			return fakellm.TextStep("recorded one preference")
		case strings.Contains(last.Content, "reviewing the conversation"):
			return toolStep("memory", `{"action":"add","target":"user","content":"Prefers dark mode."}`)
		}
		return fakellm.TextStep("?")
	})
	res := l.turn("pref", "I always want dark mode", func(in *workflows.TurnInput) { in.MemoryReviewEvery = 1 })
	if !res.Completed || *res.FinalResponse != "Sure, dark mode it is." {
		t.Fatalf("result = %+v", res)
	}
	path := filepath.Join(home, "memories", "USER.md")
	deadline := time.Now().Add(time.Minute)
	for {
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), "Prefers dark mode.") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the review never updated USER.md")
		}
		time.Sleep(100 * time.Millisecond)
	}
	reqs := l.model.Requests()
	review := reqs[1].Body
	if len(review.Tools) != 1 || review.Tools[0].Function.Name != "memory" {
		t.Fatalf("the review offered %d tools", len(review.Tools))
	}
	if !strings.Contains(review.Messages[1].Content, "I always want dark mode") {
		t.Fatalf("the review did not see the conversation: %q", review.Messages[1].Content)
	}
	// The user's session is untouched by the review.
	if got := roleList(l.transcript("pref")); got != "user,assistant" {
		t.Fatalf("session transcript = %s", got)
	}
}

// TestFailingMemoryReviewChangesNothing: a review whose model fails leaves
// the turn's result and the next turn alone.
func TestFailingMemoryReviewChangesNothing(t *testing.T) {
	t.Parallel()
	l := newLoopRun(t, nil)
	l.model.SetResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		if strings.Contains(last.Content, "reviewing the conversation") {
			return fakellm.Step{Status: 401, ErrorMessage: "review key revoked"}
		}
		return fakellm.TextStep("answer to " + last.Content)
	})
	every := func(in *workflows.TurnInput) { in.MemoryReviewEvery = 1 }
	first := l.turn("f", "one", every)
	second := l.turn("f", "two", every)
	if !first.Completed || !second.Completed || *second.FinalResponse != "answer to two" {
		t.Fatalf("results = %+v / %+v", first, second)
	}
}
