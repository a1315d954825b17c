package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// TestFirstTurnWithUnreadableContextFile: a directory named AGENTS.md in
// the working directory does not stop the first turn from starting (its
// prompt is built once, and a failure there would be retried for ever):
// the turn completes and the prompt says the file was not loaded.
func TestFirstTurnWithUnreadableContextFile(t *testing.T) {
	t.Parallel()
	l := newLoopRun(t, []fakellm.Step{fakellm.TextStep("hello back")})
	if err := os.Mkdir(filepath.Join(l.workdir, "AGENTS.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := l.turn("unreadable", "hello")
	expect(t, res, workflows.StopTextResponse, true, false, 1)
	system := l.model.Requests()[0].Body.Messages[0]
	if system.Role != "system" || !strings.Contains(system.Content, "[AGENTS.md was not loaded: it could not be read]") {
		t.Fatalf("the system prompt does not say AGENTS.md was not loaded:\n%s", system.Content)
	}
}
