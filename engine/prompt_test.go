package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/fakellm"
)

// TestSystemPromptBuiltOnceAndReused: a session's system prompt comes from
// $TALARIA_HOME and the working directory at its first turn, and later turns
// send it byte for byte even after the files changed.
func TestSystemPromptBuiltOnceAndReused(t *testing.T) {
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
