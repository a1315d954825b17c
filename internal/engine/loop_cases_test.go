//lint:file-ignore SA1019 max_tokens is the field OpenAI-compatible servers (and these wire formats) read; go-openai deprecates it only for OpenAI's o1 models

package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

// Each case here is one case of the conversation loop, end to end: the real
// workflow on the embedded server, the real store, the scripted model. Every
// case runs once for each wire format (chat completions, Anthropic Messages,
// the Responses API, Ollama's native chat): the same script, served by the
// fake in that format and read back by that provider, must make the loop
// decide the same. A case that cannot happen on a wire is skipped there,
// with the reason.

// ollamaParsesCalls is why a case of a tool call's argument text cannot
// happen on Ollama's native wire.
const ollamaParsesCalls = "Ollama parses the model's tool call before it sends it: its arguments always arrive as a JSON object"

// loopCases are the cases, each run for every wire format but those in
// skip, each with the reason the case cannot happen there.
var loopCases = []struct {
	name string
	run  func(t *testing.T, w llm.Wire)
	skip map[llm.Wire]string
}{
	{"ToolNameRepair", loopToolNameRepair, nil},
	{"UnknownTool", loopUnknownTool, nil},
	{"InvalidJSONRetriedSilently", loopInvalidJSONRetriedSilently, map[llm.Wire]string{llm.WireOllama: ollamaParsesCalls}},
	{"InvalidJSONFedBackAfterRetries", loopInvalidJSONFedBackAfterRetries, map[llm.Wire]string{llm.WireOllama: ollamaParsesCalls}},
	{"TruncatedToolCall", loopTruncatedToolCall, map[llm.Wire]string{llm.WireOllama: ollamaParsesCalls}},
	{"LengthContinuation", loopLengthContinuation, nil},
	{"LengthExhaustedIsTruncated", loopLengthExhaustedIsTruncated, nil},
	{"ThinkingExhausted", loopThinkingExhausted, nil},
	{"StreamBrokenIsRetried", loopStreamBrokenIsRetried, nil},
	{"HousekeepingTextReused", loopHousekeepingTextReused, nil},
	{"EmptyAfterToolsNudgedOnce", loopEmptyAfterToolsNudgedOnce, nil},
	{"ReasoningOnlyPrefilled", loopReasoningOnlyPrefilled, nil},
	{"EmptyExhausted", loopEmptyExhausted, nil},
	{"EmptyFallsBackToNextProvider", loopEmptyFallsBackToNextProvider, nil},
	{"GuardrailHalt", loopGuardrailHalt, nil},
	{"GuardrailHaltsRepeatedIdenticalResults", loopGuardrailHaltsRepeatedIdenticalResults, nil},
	{"GuardrailHook", loopGuardrailHook, nil},
	{"GraceCallFailsIsBudgetExhausted", loopGraceCallFailsIsBudgetExhausted, nil},
	{"RateLimitRetryAfter", loopRateLimitRetryAfter, nil},
	{"AuthErrorNotRetried", loopAuthErrorNotRetried, nil},
	{"ServerErrorsExhausted", loopServerErrorsExhausted, nil},
	{"RateLimitFallsBackAndNextTurnStartsOnPrimary", loopRateLimitFallsBackAndNextTurnStartsOnPrimary, nil},
	{"BillingAndAuthFallBack", loopBillingAndAuthFallBack, nil},
	{"BrokenProviderFallsBack", loopBrokenProviderFallsBack, nil},
	{"SequenceRepairAfterFailedTurn", loopSequenceRepairAfterFailedTurn, nil},
}

func TestLoopCases(t *testing.T) {
	for _, w := range llm.Wires {
		t.Run(string(w), func(t *testing.T) {
			t.Parallel()
			for _, c := range loopCases {
				t.Run(c.name, func(t *testing.T) {
					if why, ok := c.skip[w]; ok {
						t.Skip(why)
					}
					c.run(t, w)
				})
			}
		})
	}
}

func loopToolNameRepair(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{
		toolStep("TodoTool_tool", `{"todos":[{"id":"1","content":"write it","status":"pending"}]}`),
		toolStep("WriteFile", `{"path":"out.txt","content":"x"}`),
		fakellm.TextStep("Done."),
	})
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTextResponse, true, false, 3)
	msgs := l.transcript("s")
	if got := roleList(msgs); got != "user,assistant,tool,assistant,tool,assistant" {
		t.Fatalf("transcript = %s", got)
	}
	if msgs[1].ToolCalls[0].Function.Name != "todo" || msgs[3].ToolCalls[0].Function.Name != "write_file" {
		t.Fatalf("names not repaired: %s, %s", msgs[1].ToolCalls[0].Function.Name, msgs[3].ToolCalls[0].Function.Name)
	}
	if strings.Contains(msgs[2].Content, "does not exist") || strings.Contains(msgs[4].Content, "error") {
		t.Fatalf("repaired calls failed: %q / %q", msgs[2].Content, msgs[4].Content)
	}
}

func loopUnknownTool(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{
		fakellm.ToolStep(fakellm.ToolCall{Name: "frobnicate", Arguments: `{}`}, fakellm.ToolCall{Name: "todo", Arguments: `{}`}),
		toolStep("frobnicate", `{}`),
		toolStep("frobnicate", `{}`),
		fakellm.TextStep("never reached"),
	})
	res := l.turn("s", "go")
	expect(t, res, workflows.StopInvalidTool, false, true, 3)
	msgs := l.transcript("s")
	if got := roleList(msgs); got != "user,assistant,tool,tool,assistant,tool,assistant,tool" {
		t.Fatalf("transcript = %s", got)
	}
	// Every built-in tool (TestToolNames lists them) but web_search, which
	// needs a search service this worker does not configure.
	want := activities.UnknownToolMessage("frobnicate", slices.DeleteFunc(ToolNames(), func(n string) bool { return n == "web_search" }))
	if msgs[2].Content != want || msgs[3].Content != workflows.SkippedInvalidBatch {
		t.Fatalf("batch results = %q / %q", msgs[2].Content, msgs[3].Content)
	}
	assertAnswered(t, msgs)
}

func loopInvalidJSONRetriedSilently(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{
		toolStep("write_file", `not json`),
		toolStep("write_file", `{'path': 'x'}`),
		toolStep("write_file", `{"path":"ok.txt","content":"fine"}`),
		fakellm.TextStep("Written."),
	})
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTextResponse, true, false, 4)
	if got := roleList(l.transcript("s")); got != "user,assistant,tool,assistant" {
		t.Fatalf("transcript = %s (invalid replies must stay out)", got)
	}
	reqs := l.model.Requests()
	for i := 1; i <= 2; i++ {
		if len(reqs[i].Body.Messages) != len(reqs[0].Body.Messages) {
			t.Fatalf("re-ask %d sent %d messages, first call %d: nothing may be added", i, len(reqs[i].Body.Messages), len(reqs[0].Body.Messages))
		}
	}
}

func loopInvalidJSONFedBackAfterRetries(t *testing.T, w llm.Wire) {
	steps := []fakellm.Step{}
	for range 4 {
		steps = append(steps, toolStep("write_file", `[1,2]`))
	}
	l := newWireRun(t, w, append(steps, fakellm.TextStep("I give up on that file.")))
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTextResponse, true, false, 5)
	msgs := l.transcript("s")
	if got := roleList(msgs); got != "user,assistant,tool,assistant" {
		t.Fatalf("transcript = %s", got)
	}
	if !strings.Contains(msgs[2].Content, "not a valid JSON object") {
		t.Fatalf("error result = %q", msgs[2].Content)
	}
	if last := l.lastSent(4); last.Role != "tool" || last.ToolCallID != msgs[1].ToolCalls[0].ID {
		t.Fatalf("the model must see the error result: %+v", last)
	}
}

func loopTruncatedToolCall(t *testing.T, w llm.Wire) {
	var steps []fakellm.Step
	for range 4 {
		steps = append(steps, fakellm.Step{ToolCalls: []fakellm.ToolCall{{Name: "write_file", Arguments: `{"path":"a.txt","content":"abc`}}, FinishReason: "length"})
	}
	l := newWireRun(t, w, steps)
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTruncated, false, true, 4)
	reqs := l.model.Requests()
	wants := []int{0, 8192, 16384, 32768}
	if w == llm.WireAnthropic {
		// The Messages API requires max_tokens: with none from the loop,
		// the provider sends its default.
		wants[0] = llm.AnthropicDefaultMaxTokens
	}
	for i, want := range wants {
		if reqs[i].Body.MaxTokens != want {
			t.Fatalf("request %d max_tokens = %d, want %d", i, reqs[i].Body.MaxTokens, want)
		}
	}
	if got := roleList(l.transcript("s")); got != "user" {
		t.Fatalf("transcript = %s (cut-off calls must stay out)", got)
	}
}

func loopLengthContinuation(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{
		{Text: "Part one, ", FinishReason: "length"},
		{Text: "part two.", FinishReason: "stop"},
	})
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTextResponse, true, false, 2)
	if got := finalText(t, res); got != "Part one, part two." {
		t.Fatalf("final = %q", got)
	}
	msgs := l.transcript("s")
	if got := roleList(msgs); got != "user,assistant" || msgs[1].Content != "Part one, part two." {
		t.Fatalf("transcript = %s %q", got, msgs[len(msgs)-1].Content)
	}
	if n := l.sent(activities.ContinuationPrompt); n != 1 {
		t.Fatalf("continuation prompt sent %d times", n)
	}
	reqs := l.model.Requests()
	body := reqs[1].Body.Messages
	if body[len(body)-2].Role != "assistant" || strings.TrimSpace(body[len(body)-2].Content) != "Part one," {
		t.Fatalf("continuation request = %+v", body[len(body)-2:])
	}
}

func loopLengthExhaustedIsTruncated(t *testing.T, w llm.Wire) {
	var steps []fakellm.Step
	for _, s := range []string{"a ", "b ", "c ", "d"} {
		steps = append(steps, fakellm.Step{Text: s, FinishReason: "length"})
	}
	l := newWireRun(t, w, steps)
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTruncated, false, true, 4)
	if got := finalText(t, res); got != "a b c d" {
		t.Fatalf("partial text = %q", got)
	}
}

func loopThinkingExhausted(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{{Reasoning: "Let me think about this at length", FinishReason: "length"}})
	res := l.turn("s", "go")
	expect(t, res, workflows.StopThinkingExhausted, false, true, 1)
}

// A stream cut off before its finish reason is not an answer: it is asked
// again, and when every attempt is cut off the turn ends truncated.
func loopStreamBrokenIsRetried(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{
		{Text: "The answer is forty two and more", BreakAfterChunks: 4},
		fakellm.TextStep("The answer is forty two."),
	})
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTextResponse, true, false, 1)
	if got := finalText(t, res); got != "The answer is forty two." {
		t.Fatalf("final = %q", got)
	}
	if len(l.model.Requests()) != 2 {
		t.Fatal("a cut-off stream must be asked again")
	}
	l = newWireRun(t, w, []fakellm.Step{
		{Text: "The answer is forty two and more", BreakAfterChunks: 4},
		{Text: "The answer is forty two and more", EndAfterChunks: 3},
	})
	res = l.turn("s", "go")
	expect(t, res, workflows.StopTruncated, false, true, 1)
	if res.Error == nil || !strings.Contains(*res.Error, "cut off") || res.FinalResponse != nil {
		t.Fatalf("error %v, final %v", res.Error, res.FinalResponse)
	}
}

func loopHousekeepingTextReused(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{
		{Text: "All set: the plan is recorded.", ToolCalls: []fakellm.ToolCall{{Name: "todo", Arguments: `{"todos":[{"id":"1","content":"x","status":"completed"}]}`}}},
		{},
	})
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTextResponse, true, false, 2)
	if got := finalText(t, res); got != "All set: the plan is recorded." {
		t.Fatalf("final = %q", got)
	}
}

func loopEmptyAfterToolsNudgedOnce(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{toolStep("todo", `{}`), {}, fakellm.TextStep("Here is the summary.")})
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTextResponse, true, false, 3)
	if n := l.sent(workflows.PostToolNudge); n != 1 {
		t.Fatalf("post-tool nudge sent %d times", n)
	}
	if m := l.lastSent(2); m.Content != workflows.PostToolNudge {
		t.Fatalf("third request ends with %q", m.Content)
	}
	msgs := l.transcript("s")
	if got := roleList(msgs); got != "user,assistant,tool,assistant" {
		t.Fatalf("transcript = %s (nudges and empty replies stay out)", got)
	}
}

func loopReasoningOnlyPrefilled(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{{Reasoning: "The user wants a greeting."}, fakellm.TextStep("Hello!")})
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTextResponse, true, false, 2)
	if m := l.lastSent(1); m.Role != "assistant" || !strings.Contains(m.Content, "The user wants a greeting.") {
		t.Fatalf("prefill = %+v", m)
	}
	if got := roleList(l.transcript("s")); got != "user,assistant" {
		t.Fatalf("transcript = %s", got)
	}
}

func loopEmptyExhausted(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{{}, {}, {}, {}, fakellm.TextStep("too late")})
	res := l.turn("s", "go")
	expect(t, res, workflows.StopEmptyResponseExhausted, false, true, 4)
	if n := l.sent(workflows.EmptyNudge); n != 3 {
		t.Fatalf("empty nudge sent %d times, want 3 (once per re-ask)", n)
	}
	for i := 1; i <= 3; i++ {
		if m := l.lastSent(i); strings.Count(m.Content, workflows.EmptyNudge) != 1 {
			t.Fatalf("request %d ends with %q: the nudge must be there exactly once", i, m.Content)
		}
	}
	if got := roleList(l.transcript("s")); got != "user" {
		t.Fatalf("transcript = %s", got)
	}
}

// withFallback adds fb as the fallback provider, speaking w.
func withFallback(fb *fakellm.Server, w llm.Wire) func(*config.Config, *Options) {
	return func(c *config.Config, _ *Options) {
		c.FallbackProviders = []config.Provider{{ProviderOptions: config.ProviderOptions{Provider: string(w)},
			BaseURL: fb.URL(), APIKey: "k2", Model: "backup-model"}}
	}
}

func loopEmptyFallsBackToNextProvider(t *testing.T, w llm.Wire) {
	fb := fakellm.New(fakellm.TextStep("from the fallback"))
	defer fb.Close()
	l := newWireRun(t, w, []fakellm.Step{{}, {}, {}, {}}, withFallback(fb, w))
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTextResponse, true, false, 5)
	if got := finalText(t, res); got != "from the fallback" {
		t.Fatalf("final = %q", got)
	}
	if r := fb.Requests(); len(r) != 1 || r[0].Body.Model != "backup-model" {
		t.Fatalf("fallback requests = %d", len(r))
	}
}

func loopGuardrailHalt(t *testing.T, w llm.Wire) {
	var steps []fakellm.Step
	for range 5 {
		steps = append(steps, toolStep("read_file", `{"path":"missing.txt"}`))
	}
	l := newWireRun(t, w, steps)
	res := l.turn("s", "go")
	expect(t, res, workflows.StopGuardrailHalt, false, true, 5)
	msgs := l.transcript("s")
	assertAnswered(t, msgs)
	var warned int
	for _, m := range msgs {
		if m.Role == "tool" && strings.Contains(m.Content, "[guardrail warning]") {
			warned++
		}
	}
	last := msgs[len(msgs)-1]
	if warned != 2 || last.Role != "assistant" || !strings.Contains(last.Content, "guardrail") {
		t.Fatalf("warnings = %d, last = %s %q", warned, last.Role, last.Content)
	}
	if blocked := msgs[len(msgs)-2]; !strings.Contains(blocked.Content, "blocked by a guardrail") {
		t.Fatalf("blocked result = %q", blocked.Content)
	}
	if got := finalText(t, res); got != last.Content {
		t.Fatalf("final = %q", got)
	}
}

func loopGuardrailHaltsRepeatedIdenticalResults(t *testing.T, w llm.Wire) {
	var steps []fakellm.Step
	for range 7 {
		steps = append(steps, toolStep("todo", `{}`))
	}
	l := newWireRun(t, w, steps)
	res := l.turn("s", "go")
	expect(t, res, workflows.StopGuardrailHalt, false, true, 6)
	var warned int
	for _, m := range l.transcript("s") {
		if m.Role == "tool" && strings.Contains(m.Content, "[guardrail warning]") && strings.Contains(m.Content, "not making progress") {
			warned++
		}
	}
	if warned != 2 {
		t.Fatalf("no-progress warnings = %d, want 2", warned)
	}
}

func loopGuardrailHook(t *testing.T, w llm.Wire) {
	hook := loop.HookFunc(func(c loop.ToolCall) *loop.Decision {
		if c.Name == "terminal" && strings.Contains(c.Arguments, "rm -rf") {
			return &loop.Decision{Verdict: loop.Halt, Reason: "recursive deletes are not allowed here"}
		}
		return nil
	})
	l := newWireRun(t, w, []fakellm.Step{
		fakellm.ToolStep(fakellm.ToolCall{Name: "write_file", Arguments: `{"path":"keep.txt","content":"x"}`},
			fakellm.ToolCall{Name: "terminal", Arguments: `{"command":"rm -rf ."}`}),
	}, func(c *config.Config, o *Options) { o.Guardrail = hook; c.Approvals.Mode = "off" })
	// Approvals off (the worker's policy and the turn's): the pluggable hook
	// alone decides.
	res := l.turn("s", "go", func(in *workflows.TurnInput) { in.Approvals.Mode = workflows.ApprovalOff })
	expect(t, res, workflows.StopGuardrailHalt, false, true, 1)
	msgs := l.transcript("s")
	assertAnswered(t, msgs)
	if msgs[2].Content != turnapi.SkippedAfterHalt || !strings.Contains(msgs[3].Content, "recursive deletes") {
		t.Fatalf("results = %q / %q", msgs[2].Content, msgs[3].Content)
	}
}

func loopGraceCallFailsIsBudgetExhausted(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{toolStep("todo", `{}`), {}})
	res := l.turn("s", "go", func(in *workflows.TurnInput) { in.MaxIterations = 1 })
	expect(t, res, workflows.StopBudgetExhausted, false, true, 2)
	if res.FinalResponse != nil {
		t.Fatalf("final = %q", *res.FinalResponse)
	}
	if reqs := l.model.Requests(); len(reqs[1].Body.Tools) != 0 {
		t.Fatal("the grace call must not offer tools")
	}
}

func loopRateLimitRetryAfter(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{{Status: 429, ErrorMessage: "slow down", RetryAfter: "2"}, fakellm.TextStep("ok")})
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTextResponse, true, false, 1)
	reqs := l.model.Requests()
	// wallclock: a lower bound: the retry's delay runs from the failure, after the first request arrived; load only lengthens the gap
	if gap := reqs[1].Received.Sub(reqs[0].Received); gap < 2*time.Second {
		t.Fatalf("retried after %v, Retry-After said 2s", gap)
	}
}

func loopAuthErrorNotRetried(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{{Status: 401, ErrorMessage: "Incorrect API key provided"}})
	res := l.turn("s", "go")
	expect(t, res, workflows.StopError, false, false, 1)
	if !res.Failed || res.Error == nil || !strings.Contains(*res.Error, "Incorrect API key provided") {
		t.Fatalf("error = %v", res.Error)
	}
	if n := len(l.model.Requests()); n != 1 {
		t.Fatalf("auth error sent %d times", n)
	}
}

func loopServerErrorsExhausted(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{{Status: 500, ErrorMessage: "upstream exploded"}, {Status: 500, ErrorMessage: "upstream exploded"}})
	res := l.turn("s", "go")
	expect(t, res, workflows.StopError, false, false, 1)
	if res.Error == nil || !strings.Contains(*res.Error, "upstream exploded") {
		t.Fatalf("error = %v", res.Error)
	}
	if n := len(l.model.Requests()); n != 2 {
		t.Fatalf("attempts = %d, want 2", n)
	}
}

func loopRateLimitFallsBackAndNextTurnStartsOnPrimary(t *testing.T, w llm.Wire) {
	fb := fakellm.New(fakellm.TextStep("fallback answer"))
	defer fb.Close()
	l := newWireRun(t, w, []fakellm.Step{{Status: 429, ErrorMessage: "rate limited", RetryAfter: "30"}, fakellm.TextStep("primary again")}, withFallback(fb, w))
	res := l.turn("s", "one")
	expect(t, res, workflows.StopTextResponse, true, false, 2)
	if got := finalText(t, res); got != "fallback answer" {
		t.Fatalf("final = %q", got)
	}
	res = l.turn("s", "two")
	if got := finalText(t, res); got != "primary again" {
		t.Fatalf("second turn final = %q (each turn starts on the primary)", got)
	}
}

func loopBillingAndAuthFallBack(t *testing.T, w llm.Wire) {
	for _, step := range []fakellm.Step{
		{Status: 402, ErrorMessage: "insufficient credits"},
		{Status: 401, ErrorMessage: "key revoked"},
		{Status: 529, ErrorMessage: "overloaded"},
	} {
		t.Run(fmt.Sprint(step.Status), func(t *testing.T) {
			fb := fakellm.New(fakellm.TextStep("fallback answer"))
			defer fb.Close()
			steps := []fakellm.Step{step, step, step}
			l := newWireRun(t, w, steps, withFallback(fb, w))
			res := l.turn("s", "go")
			expect(t, res, workflows.StopTextResponse, true, false, 2)
			if got := finalText(t, res); got != "fallback answer" {
				t.Fatalf("final = %q", got)
			}
		})
	}
}

// loopBrokenProviderFallsBack: a primary that answers with an HTML page
// is tried as often as the turn allows (2 here; never more than
// invalid_response's own 3), then the turn goes on with the fallback
// provider.
func loopBrokenProviderFallsBack(t *testing.T, w llm.Wire) {
	fb := fakellm.New(fakellm.TextStep("fallback answer"))
	defer fb.Close()
	page := fakellm.HTMLStep("502 Bad Gateway")
	l := newWireRun(t, w, []fakellm.Step{page, page, page, page}, withFallback(fb, w))
	res := l.turn("s", "go")
	expect(t, res, workflows.StopTextResponse, true, false, 2)
	if got := finalText(t, res); got != "fallback answer" {
		t.Fatalf("final = %q", got)
	}
	if n := len(l.model.Requests()); n != 2 {
		t.Fatalf("primary asked %d times, want 2 (the turn's model attempts)", n)
	}
}

func loopSequenceRepairAfterFailedTurn(t *testing.T, w llm.Wire) {
	l := newWireRun(t, w, []fakellm.Step{{Status: 401, ErrorMessage: "bad key"}, fakellm.TextStep("hi")})
	expect(t, l.turn("s", "first"), workflows.StopError, false, false, 1)
	expect(t, l.turn("s", "second"), workflows.StopTextResponse, true, false, 1)
	msgs := l.model.Requests()[1].Body.Messages
	var users []string
	for _, m := range msgs {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if len(users) != 1 || users[0] != "first\n\nsecond" {
		t.Fatalf("user messages sent = %q (consecutive users must be merged)", users)
	}
}
