//lint:file-ignore SA1019 max_tokens is the field OpenAI-compatible servers (and these wire formats) read; go-openai deprecates it only for OpenAI's o1 models

package engine

import (
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// Arguments that end mid-JSON in a reply the model finished are invalid
// arguments, not an output-limit cut-off: re-asked silently, then answered
// with an error the model sees and corrects, and the turn goes on.
func TestLoopBrokenArgumentsFedBack(t *testing.T) {
	t.Parallel()
	broken := `{"path":"a.txt","content":"abc`
	var steps []fakellm.Step
	for range 4 {
		steps = append(steps, toolStep("write_file", broken))
	}
	steps = append(steps,
		toolStep("write_file", `{"path":"a.txt","content":"abc"}`),
		fakellm.TextStep("Written."))
	l := newLoopRun(t, steps)
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTextResponse, true, false, 6)
	msgs := l.transcript("s")
	if got := roleList(msgs); got != "user,assistant,tool,assistant,tool,assistant" {
		t.Fatalf("transcript = %s (only the answered broken call may stay)", got)
	}
	if msgs[1].ToolCalls[0].Function.Arguments != broken || !strings.Contains(msgs[2].Content, "Error") {
		t.Fatalf("broken call %q answered with %q", msgs[1].ToolCalls[0].Function.Arguments, msgs[2].Content)
	}
	if last := l.lastSent(4); last.Role != "tool" || last.ToolCallID != msgs[1].ToolCalls[0].ID {
		t.Fatalf("the model must see the error result: %+v", last)
	}
	for i, r := range l.model.Requests()[:4] {
		if r.Body.MaxTokens != 0 {
			t.Fatalf("request %d max_tokens = %d: more room does not mend broken JSON", i, r.Body.MaxTokens)
		}
	}
	assertAnswered(t, msgs)
}

// A tool call cut off by the output limit on every attempt ends the turn
// truncated with a message saying so.
func TestLoopTruncatedToolCallSaysWhy(t *testing.T) {
	t.Parallel()
	var steps []fakellm.Step
	for range 4 {
		steps = append(steps, fakellm.Step{ToolCalls: []fakellm.ToolCall{{Name: "write_file", Arguments: `{"path":"a.txt","content":"abc`}}, FinishReason: "length"})
	}
	l := newLoopRun(t, steps)
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTruncated, false, true, 4)
	if res.Error == nil || !strings.Contains(*res.Error, "cut off by the output limit on 4 attempts") {
		t.Fatalf("error = %v", res.Error)
	}
}

// An answer still cut off after every continuation is shown, with a
// message saying it is incomplete.
func TestLoopLengthExhaustedSaysWhy(t *testing.T) {
	t.Parallel()
	var steps []fakellm.Step
	for _, s := range []string{"a ", "b ", "c ", "d"} {
		steps = append(steps, fakellm.Step{Text: s, FinishReason: "length"})
	}
	l := newLoopRun(t, steps)
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTruncated, false, true, 4)
	if got := finalText(t, res); got != "a b c d" {
		t.Fatalf("partial text = %q", got)
	}
	if res.Error == nil || !strings.Contains(*res.Error, "incomplete") {
		t.Fatalf("error = %v", res.Error)
	}
}
