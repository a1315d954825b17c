package workflows

import (
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/approval"
	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/transcript"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

var fuzzKnown = []string{"clarify", "read_file", "terminal", "todo", "write_file"}

// fuzzReply builds a stored reply from raw model output the way CallModel
// does: ids filled in and de-duplicated, names repaired.
func fuzzReply(content, reasoning, finish, names, args string) *models.Message {
	var calls []openai.ToolCall
	if names != "" {
		argList := strings.Split(args, "\x00")
		for i, name := range strings.Split(names, "|") {
			a := ""
			if i < len(argList) {
				a = argList[i]
			}
			id := ""
			if i%3 != 2 { // some ids missing, some duplicated
				id = "call_" + string(rune('a'+i%2))
			}
			calls = append(calls, openai.ToolCall{ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: a}})
		}
	}
	stored := transcript.ToolCallsFromOpenAI(calls, "call_1_")
	return &models.Message{ID: 42, Role: "assistant", Content: content, Reasoning: reasoning,
		FinishReason: finish, ToolCalls: activities.RepairCalls(stored, fuzzKnown)}
}

// FuzzLoopDecisions feeds random model outputs (names, argument strings,
// finish reasons, empty and reasoning-only content) through the loop's
// decisions from any point of a turn: nothing panics, every step is a known
// kind with a coherent stop reason, and whenever tools are run every tool
// call id is answered exactly once, in call order.
func FuzzLoopDecisions(f *testing.F) {
	f.Add("hello", "", "stop", "", "", uint8(0))
	f.Add("", "", "stop", "", "", uint8(1))
	f.Add("<think>hm</think>", "", "stop", "", "", uint8(2))
	f.Add("", "deep thought", "length", "", "", uint8(3))
	f.Add("cut", "", "length", "", "", uint8(4))
	f.Add("", "", "tool_calls", "TodoTool_tool|frobnicate", "{}\x00not json", uint8(5))
	f.Add("", "", "tool_calls", "read_file|read_file|read_file", `{"path":"a"}`+"\x00"+`{"path":`+"\x00[1]", uint8(6))
	f.Add("noted", "", "length", "write_file", `{"path":"a","content":"b`, uint8(7))
	f.Fuzz(func(t *testing.T, content, reasoning, finish, names, args string, counters uint8) {
		m := fuzzReply(content, reasoning, finish, names, args)
		r := activities.DescribeReplyIn(m, fuzzKnown, approval.Where{})
		st := TurnState{
			InvalidToolRetries: int(counters & 3), InvalidJSONRetries: int(counters >> 2 & 3),
			EmptyRetries: int(counters >> 4 & 3), AfterTools: counters&64 != 0, Providers: 1 + int(counters>>7),
			TruncatedToolRetries: int(counters & 3), LengthContinuations: int(counters >> 2 & 3),
		}
		lim := loop.DefaultLimits()
		lim.BrokenArgsAreInvalid = counters&32 != 0
		step, next := decide(st, r, lim)
		switch step.Kind {
		case StepRecall:
			if step.Reason != "" {
				t.Fatalf("recall with a stop reason %s", step.Reason)
			}
		case StepFinish, StepStop:
			if step.Reason == "" {
				t.Fatal("stop without a reason")
			}
			if step.Reason == StopTruncated && next.Err == "" {
				t.Fatal("truncated without a message")
			}
			if step.Reason == StopTruncated && lim.BrokenArgsAreInvalid && len(m.ToolCalls) > 0 && finish != loop.FinishLength {
				t.Fatal("broken arguments in a finished reply ended the turn truncated")
			}
		case StepRunTools:
			if len(m.ToolCalls) == 0 {
				t.Fatal("run tools without calls")
			}
			assertEachAnsweredOnce(t, m, step)
		default:
			t.Fatalf("unknown step kind %d", step.Kind)
		}
		if next.Provider >= max(next.Providers, 1) {
			t.Fatalf("provider %d of %d", next.Provider, next.Providers)
		}
	})
}

// assertEachAnsweredOnce composes the batch's results as ExecuteTools does,
// pretending every planned run succeeded, and checks the pairing.
func assertEachAnsweredOnce(t *testing.T, m *models.Message, step Step) {
	t.Helper()
	plan := turnapi.PlanByID(step.Plan)
	ran := map[string]tools.Result{}
	for _, c := range m.ToolCalls {
		if plan.Get(c.ID).Action == turnapi.PlanRun {
			ran[c.ID] = tools.Result{CallID: c.ID, Name: c.Function.Name, Content: "ok"}
		}
	}
	rows, _ := activities.ComposeResults(turnapi.ExecuteToolsInput{TurnID: "t", SessionID: "s", Call: 1}, m.ToolCalls, plan, ran, fuzzKnown)
	if len(rows) != len(m.ToolCalls) {
		t.Fatalf("%d results for %d calls", len(rows), len(m.ToolCalls))
	}
	seen := map[string]bool{}
	for i, c := range m.ToolCalls {
		if seen[c.ID] {
			t.Fatalf("duplicate call id %q reached the plan", c.ID)
		}
		seen[c.ID] = true
		if rows[i].ToolCallID != c.ID || rows[i].Role != "tool" || rows[i].Content == "" {
			t.Fatalf("result %d answers %q with %q, want call %q", i, rows[i].ToolCallID, rows[i].Content, c.ID)
		}
	}
}
