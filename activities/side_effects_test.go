package activities

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/talaria-agent/talaria/internal/skills"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// TestRetriedBatchDoesNotRepeatEffects: a tool with side effects runs once
// per call, however often its ExecuteTools activity is retried. A retry
// after the result was stored returns that result and runs nothing; a
// retry that finds the call claimed without a result (the worker died
// while it ran) answers "outcome unknown" and runs nothing. Each case's
// effect would show if it ran twice (a patch whose new text holds the
// old one grows again).
func TestRetriedBatchDoesNotRepeatEffects(t *testing.T) {
	for _, tt := range []struct {
		tool, args string
		// effect reads what the calls did in dir.
		effect func(dir string) string
		once   string
	}{
		{"patch", `{"path":"f.txt","old_string":"x","new_string":"xx"}`, readIn("f.txt"), "xx\n"},
		{"write_file", `{"path":"w.txt","content":"one"}`, readIn("w.txt"), "one"},
		{"skill_manage", `{"action":"patch","name":"deploy","old_string":"step x","new_string":"step xx"}`,
			readIn("skills/deploy/SKILL.md"), "---\nname: deploy\ndescription: ship it\n---\nstep xx\n"},
		{"process", `{"action":"start","command":"echo run >> starts.txt"}`, settled(readIn("starts.txt")), "run\n"},
		{"execute_code", `{"language":"bash","code":"echo run >> codes.txt"}`, readIn("codes.txt"), "run\n"},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := skills.Create(dir, "deploy", "---\nname: deploy\ndescription: ship it\n---\nstep x\n"); err != nil {
				t.Fatal(err)
			}
			procs := tools.NewProcesses()
			defer procs.Close()
			registry, err := tools.NewRegistry(tools.Patch, tools.WriteFile, tools.SkillManage(dir), tools.Process(procs), tools.ExecuteCodeTool{})
			if err != nil {
				t.Fatal(err)
			}
			store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			if _, err := store.EnsureSession(ctx, "s", "m"); err != nil {
				t.Fatal(err)
			}
			a := &Activities{Store: store, Tools: registry}
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			env.RegisterActivity(a.ExecuteTools)
			batch := func(call int, id string) turnapi.ExecuteToolsInput {
				tc := models.ToolCall{ID: id, Type: "function"}
				tc.Function.Name, tc.Function.Arguments = tt.tool, tt.args
				saved, err := store.AppendMessages(ctx, []models.Message{{SessionID: "s", TurnID: "t", Role: "assistant",
					IdemKey: "t/call-" + string(rune('0'+call)) + "/assistant", ToolCalls: []models.ToolCall{tc}}})
				if err != nil {
					t.Fatal(err)
				}
				return turnapi.ExecuteToolsInput{TurnID: "t", SessionID: "s", Call: call, AssistantMessageID: saved[0].ID, Workdir: dir}
			}
			run := func(in turnapi.ExecuteToolsInput) {
				t.Helper()
				if _, err := env.ExecuteActivity(a.ExecuteTools, in); err != nil {
					t.Fatal(err)
				}
			}
			first := batch(1, "c1")
			run(first)
			run(first) // retried after its result was stored
			if got := tt.effect(dir); got != tt.once {
				t.Fatalf("after a retried batch: %q, want %q (the effect once)", got, tt.once)
			}
			// The worker died while the call ran: claimed, no result.
			second := batch(2, "c2")
			if _, err := store.ClaimTool(ctx, toolKey("t", 2, "c2")); err != nil {
				t.Fatal(err)
			}
			run(second)
			if got := tt.effect(dir); got != tt.once {
				t.Errorf("a claimed call ran again: %q, want %q", got, tt.once)
			}
			m, err := store.MessageByKey(ctx, toolKey("t", 2, "c2"))
			if err != nil || !strings.Contains(m.Content, "Outcome unknown") {
				t.Errorf("the claimed call's answer: %q (%v), want outcome unknown", m.Content, err)
			}
		})
	}
}

// readIn reads a file of the case's directory ("" when missing).
func readIn(name string) func(dir string) string {
	return func(dir string) string {
		data, _ := os.ReadFile(filepath.Join(dir, name))
		return string(data)
	}
}

// settled reads with read once a background process has written (read
// gives something; a minute at most) and a duplicate has had half a second
// more to show.
func settled(read func(dir string) string) func(dir string) string {
	return func(dir string) string {
		for giveUp := time.Now().Add(time.Minute); read(dir) == "" && time.Now().Before(giveUp); {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond) // room for a second run to show
		return read(dir)
	}
}
