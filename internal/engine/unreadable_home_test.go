package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/prompt"
	"github.com/talaria-agent/talaria/workflows"
)

// TestFirstTurnWithUnreadableHomeFiles: a directory named SOUL.md and
// one named MEMORY.md in $TALARIA_HOME do not stop a session's first turn
// from starting (its prompt is built once, and a failure there used to be
// retried for ever): the turn completes with the default identity, and
// the prompt says which files were not loaded.
func TestFirstTurnWithUnreadableHomeFiles(t *testing.T) {
	t.Parallel()
	l := newLoopRun(t, []fakellm.Step{fakellm.TextStep("hello back")}, func(cfg *config.Config, _ *Options) {
		for _, dir := range []string{filepath.Join(cfg.Home, prompt.SoulFile), filepath.Join(cfg.Home, prompt.MemoryDir, prompt.MemoryFile)} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	})
	res := l.turn("unreadable-home", "hello")
	expect(t, res, workflows.StopTextResponse, true, false, 1)
	system := l.model.Requests()[0].Body.Messages[0]
	for _, want := range []string{prompt.DefaultIdentity, "[SOUL.md was not loaded: it could not be read]",
		"[memories/MEMORY.md was not loaded: it could not be read]"} {
		if system.Role != "system" || !strings.Contains(system.Content, want) {
			t.Errorf("the system prompt lacks %q:\n%s", want, system.Content)
		}
	}
}
