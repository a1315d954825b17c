package workflows

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

var lim = loop.DefaultLimits()

func reply(kind loop.ReplyKind, id int64) turnapi.CallModelResult {
	r := turnapi.CallModelResult{MessageID: id, Kind: kind}
	if kind == loop.ReplyText || kind == loop.ReplyTextCutOff {
		r.TextChars = 4
	}
	return r
}

func TestDecideByKind(t *testing.T) {
	tests := []struct {
		name  string
		st    TurnState
		r     turnapi.CallModelResult
		want  Step
		check func(t *testing.T, st TurnState)
	}{
		{"text finishes", TurnState{}, reply(loop.ReplyText, 7),
			Step{Kind: StepFinish, Reason: StopTextResponse, Final: []int64{7}}, nil},
		{"text after continued parts joins them", TurnState{Parts: []int64{3, 4}}, reply(loop.ReplyText, 7),
			Step{Kind: StepFinish, Reason: StopTextResponse, Final: []int64{3, 4, 7}}, nil},
		{"reasoning cut off is thinking exhausted", TurnState{}, reply(loop.ReplyReasoningCutOff, 7),
			Step{Kind: StepStop, Reason: StopThinkingExhausted}, nil},
		{"cut-off text is continued", TurnState{}, reply(loop.ReplyTextCutOff, 7),
			Step{Kind: StepRecall}, func(t *testing.T, st TurnState) {
				if st.LengthContinuations != 1 || !reflect.DeepEqual(st.Next.ContinueFrom, []int64{7}) {
					t.Fatalf("state = %+v", st)
				}
			}},
		{"cut-off text after 3 continuations stops truncated with the parts", TurnState{LengthContinuations: 3, Parts: []int64{1, 2, 3}},
			reply(loop.ReplyTextCutOff, 7), Step{Kind: StepStop, Reason: StopTruncated, Final: []int64{1, 2, 3, 7}}, nil},
		{"cut-off tool call doubles max tokens", TurnState{}, reply(loop.ReplyToolCallCutOff, 7),
			Step{Kind: StepRecall}, func(t *testing.T, st TurnState) {
				if st.Next.MaxTokens != 2*lim.BaseMaxTokens || st.TruncatedToolRetries != 1 {
					t.Fatalf("state = %+v", st)
				}
			}},
		{"third cut-off tool call uses 8x", TurnState{TruncatedToolRetries: 2}, reply(loop.ReplyToolCallCutOff, 7),
			Step{Kind: StepRecall}, func(t *testing.T, st TurnState) {
				if st.Next.MaxTokens != 8*lim.BaseMaxTokens {
					t.Fatalf("max tokens = %d", st.Next.MaxTokens)
				}
			}},
		{"cut-off tool call after 3 retries stops truncated", TurnState{TruncatedToolRetries: 3}, reply(loop.ReplyToolCallCutOff, 7),
			Step{Kind: StepStop, Reason: StopTruncated}, func(t *testing.T, st TurnState) {
				if !strings.Contains(st.Err, "ended mid-JSON on 4 attempts") {
					t.Fatalf("err = %q", st.Err)
				}
			}},
		{"tool call cut off by the limit after 3 retries says so", TurnState{TruncatedToolRetries: 3}, finished(reply(loop.ReplyToolCallCutOff, 7), "length"),
			Step{Kind: StepStop, Reason: StopTruncated}, func(t *testing.T, st TurnState) {
				if !strings.Contains(st.Err, "cut off by the output limit on 4 attempts (the last allowed 32768 tokens)") {
					t.Fatalf("err = %q", st.Err)
				}
			}},
		{"cut-off text stopped says it is incomplete", TurnState{LengthContinuations: 3, Parts: []int64{1, 2, 3}}, reply(loop.ReplyTextCutOff, 7),
			Step{Kind: StepStop, Reason: StopTruncated, Final: []int64{1, 2, 3, 7}}, func(t *testing.T, st TurnState) {
				if !strings.Contains(st.Err, "cut off by the output limit 4 times") {
					t.Fatalf("err = %q", st.Err)
				}
			}},
		{"a recall leaves no error", TurnState{}, reply(loop.ReplyToolCallCutOff, 7),
			Step{Kind: StepRecall}, func(t *testing.T, st TurnState) {
				if st.Err != "" {
					t.Fatalf("err = %q", st.Err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step, st := decide(tt.st, tt.r, lim)
			if !reflect.DeepEqual(step, tt.want) {
				t.Fatalf("step = %+v, want %+v", step, tt.want)
			}
			if tt.check != nil {
				tt.check(t, st)
			}
		})
	}
}

func TestDecideEmptyLadder(t *testing.T) {
	empty, thinking := reply(loop.ReplyEmpty, 9), reply(loop.ReplyReasoningOnly, 9)
	tests := []struct {
		name  string
		st    TurnState
		r     turnapi.CallModelResult
		kind  StepKind
		want  StopReason
		next  NextCall
		final []int64
	}{
		{"housekeeping text is reused", TurnState{HousekeepingText: 5, AfterTools: true}, empty, StepFinish, StopTextResponse, NextCall{}, []int64{5}},
		{"empty after tools gets the post-tool nudge", TurnState{AfterTools: true}, empty, StepRecall, "", NextCall{Nudge: PostToolNudge}, nil},
		{"post-tool nudge only once", TurnState{AfterTools: true, PostToolNudged: true}, empty, StepRecall, "", NextCall{Nudge: EmptyNudge}, nil},
		{"reasoning only is prefilled", TurnState{}, thinking, StepRecall, "", NextCall{PrefillFrom: 9}, nil},
		{"prefill at most twice", TurnState{PrefillRetries: 2}, thinking, StepRecall, "", NextCall{Nudge: EmptyNudge}, nil},
		{"truly empty is nudged", TurnState{}, empty, StepRecall, "", NextCall{Nudge: EmptyNudge}, nil},
		{"third nudge", TurnState{EmptyRetries: 2}, empty, StepRecall, "", NextCall{Nudge: EmptyNudge}, nil},
		{"then the fallback provider", TurnState{EmptyRetries: 3, Providers: 2}, empty, StepRecall, "", NextCall{}, nil},
		{"then give up", TurnState{EmptyRetries: 3, Providers: 2, Provider: 1}, empty, StepStop, StopEmptyResponseExhausted, NextCall{}, nil},
		{"no fallback: give up", TurnState{EmptyRetries: 3, Providers: 1}, empty, StepStop, StopEmptyResponseExhausted, NextCall{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step, st := decide(tt.st, tt.r, lim)
			if step.Kind != tt.kind || step.Reason != tt.want || !reflect.DeepEqual(st.Next, tt.next) || !reflect.DeepEqual(step.Final, tt.final) {
				t.Fatalf("step = %+v, next = %+v", step, st.Next)
			}
		})
	}
	// Falling back resets the ladder for the new provider.
	_, st := decide(TurnState{EmptyRetries: 3, PrefillRetries: 2, Providers: 3}, empty, lim)
	if st.Provider != 1 || st.EmptyRetries != 0 || st.PrefillRetries != 0 {
		t.Fatalf("after fallback: %+v", st)
	}
}

func call(id, name string, args loop.ArgsStatus, unknown bool) turnapi.ToolCallRef {
	return turnapi.ToolCallRef{ID: id, Name: name, Args: args, Unknown: unknown, Key: name + "-key"}
}

func toolsReply(calls ...turnapi.ToolCallRef) turnapi.CallModelResult {
	return turnapi.CallModelResult{MessageID: 11, Kind: loop.ReplyToolCalls, ToolCalls: calls}
}

func TestDecideToolCalls(t *testing.T) {
	ok1, ok2 := call("a", "read_file", loop.ArgsValid, false), call("b", "terminal", loop.ArgsValid, false)
	bad := call("c", "write_file", loop.ArgsInvalid, false)
	unknown := call("d", "serch", loop.ArgsValid, true)
	run := func(ids ...string) []turnapi.CallPlan {
		var p []turnapi.CallPlan
		for _, id := range ids {
			p = append(p, turnapi.CallPlan{ID: id, Action: turnapi.PlanRun})
		}
		return p
	}
	tests := []struct {
		name string
		st   TurnState
		r    turnapi.CallModelResult
		want Step
	}{
		{"valid batch runs", TurnState{}, toolsReply(ok1, ok2), Step{Kind: StepRunTools, Reveal: true, Plan: run("a", "b")}},
		{"invalid JSON is re-asked silently", TurnState{}, toolsReply(ok1, bad), Step{Kind: StepRecall}},
		{"invalid JSON after 3 retries gets error results", TurnState{InvalidJSONRetries: 3}, toolsReply(ok1, bad),
			Step{Kind: StepRunTools, Reveal: true, Plan: []turnapi.CallPlan{{ID: "a", Action: turnapi.PlanRun}, {ID: "c", Action: turnapi.PlanInvalidArgs}}}},
		{"unknown tool answered, the rest skipped", TurnState{}, toolsReply(ok1, unknown),
			Step{Kind: StepRunTools, Reveal: true, Plan: []turnapi.CallPlan{
				{ID: "a", Action: turnapi.PlanSkip, Note: SkippedInvalidBatch}, {ID: "d", Action: turnapi.PlanUnknown}}}},
		{"third unknown tool stops after answering", TurnState{InvalidToolRetries: 2}, toolsReply(unknown),
			Step{Kind: StepRunTools, Reveal: true, StopAfter: StopInvalidTool, Plan: []turnapi.CallPlan{{ID: "d", Action: turnapi.PlanUnknown}}}},
		{"execute_code only is refunded", TurnState{}, toolsReply(call("e", "execute_code", loop.ArgsValid, false)),
			Step{Kind: StepRunTools, Reveal: true, Refund: true, Plan: run("e")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step, _ := decide(tt.st, tt.r, lim)
			if !reflect.DeepEqual(step, tt.want) {
				t.Fatalf("step =\n%+v\nwant\n%+v", step, tt.want)
			}
		})
	}
}

func finished(r turnapi.CallModelResult, reason string) turnapi.CallModelResult {
	r.FinishReason = reason
	return r
}

// Arguments that end mid-JSON in a reply the model finished: since change
// invalid-args-feedback they take the invalid-JSON path (silent re-asks,
// then an error result the model can act on), never a truncated stop; cut
// off by the output limit they are still re-asked with more room.
func TestDecideBrokenArguments(t *testing.T) {
	fb := lim
	fb.BrokenArgsAreInvalid = true
	ok1 := call("a", "read_file", loop.ArgsValid, false)
	broken := call("c", "write_file", loop.ArgsTruncated, false)
	cutOff := func(finish string, calls ...turnapi.ToolCallRef) turnapi.CallModelResult {
		r := toolsReply(calls...)
		r.Kind, r.FinishReason = loop.ReplyToolCallCutOff, finish
		return r
	}
	tests := []struct {
		name   string
		lim    loop.Limits
		st     TurnState
		r      turnapi.CallModelResult
		want   Step
		wantSt func(TurnState) bool
	}{
		{"re-asked silently", fb, TurnState{}, cutOff("tool_calls", broken), Step{Kind: StepRecall},
			func(st TurnState) bool {
				return st.InvalidJSONRetries == 1 && st.TruncatedToolRetries == 0 && st.Next.MaxTokens == 0
			}},
		{"no finish reason is not a cut-off either", fb, TurnState{}, cutOff("", broken), Step{Kind: StepRecall},
			func(st TurnState) bool { return st.InvalidJSONRetries == 1 }},
		{"after 3 re-asks answered with an error, the rest runs", fb, TurnState{InvalidJSONRetries: 3}, cutOff("stop", ok1, broken),
			Step{Kind: StepRunTools, Reveal: true, Plan: []turnapi.CallPlan{
				{ID: "a", Action: turnapi.PlanRun}, {ID: "c", Action: turnapi.PlanInvalidArgs}}},
			func(st TurnState) bool { return st.Err == "" && st.Stop == "" }},
		{"never truncated, whatever the cut-off counter", fb, TurnState{InvalidJSONRetries: 3, TruncatedToolRetries: 3}, cutOff("tool_calls", broken),
			Step{Kind: StepRunTools, Reveal: true, Plan: []turnapi.CallPlan{{ID: "c", Action: turnapi.PlanInvalidArgs}}},
			func(st TurnState) bool { return st.Err == "" }},
		{"an unknown tool beside them is answered first", fb, TurnState{}, cutOff("tool_calls", broken, call("d", "serch", loop.ArgsValid, true)),
			Step{Kind: StepRunTools, Reveal: true, Plan: []turnapi.CallPlan{
				{ID: "c", Action: turnapi.PlanSkip, Note: SkippedInvalidBatch}, {ID: "d", Action: turnapi.PlanUnknown}}},
			func(st TurnState) bool { return st.InvalidToolRetries == 1 }},
		{"cut off by the limit still gets more room", fb, TurnState{}, cutOff("length", broken), Step{Kind: StepRecall},
			func(st TurnState) bool {
				return st.TruncatedToolRetries == 1 && st.Next.MaxTokens == 2*lim.BaseMaxTokens
			}},
		{"cut off by the limit still stops truncated, saying so", fb, TurnState{TruncatedToolRetries: 3}, cutOff("length", broken),
			Step{Kind: StepStop, Reason: StopTruncated},
			func(st TurnState) bool { return strings.Contains(st.Err, "output limit") }},
		{"older turns keep the cut-off path", lim, TurnState{}, cutOff("tool_calls", broken), Step{Kind: StepRecall},
			func(st TurnState) bool { return st.TruncatedToolRetries == 1 && st.InvalidJSONRetries == 0 }},
		{"older turns stop truncated with a message", lim, TurnState{TruncatedToolRetries: 3}, cutOff("tool_calls", broken),
			Step{Kind: StepStop, Reason: StopTruncated},
			func(st TurnState) bool { return strings.Contains(st.Err, "mid-JSON") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step, st := decide(tt.st, tt.r, tt.lim)
			if !reflect.DeepEqual(step, tt.want) {
				t.Fatalf("step =\n%+v\nwant\n%+v", step, tt.want)
			}
			if !tt.wantSt(st) {
				t.Fatalf("state = %+v", st)
			}
		})
	}
}

func TestStopKeepsTheDecisionsMessage(t *testing.T) {
	st := TurnState{Err: "why"}
	st.stop(StopTruncated, "")
	if st.Err != "why" || st.Stop != StopTruncated {
		t.Fatalf("state = %+v", st)
	}
	st.stop(StopError, "other")
	if st.Err != "other" {
		t.Fatalf("err = %q", st.Err)
	}
}

func TestHousekeepingText(t *testing.T) {
	r := toolsReply(call("a", "todo", loop.ArgsValid, false))
	r.TextChars = 10
	_, st := decide(TurnState{}, r, lim)
	if st.HousekeepingText != r.MessageID {
		t.Fatalf("housekeeping text = %d", st.HousekeepingText)
	}
	r2 := toolsReply(call("a", "todo", loop.ArgsValid, false), call("b", "terminal", loop.ArgsValid, false))
	r2.TextChars = 10
	_, st = decide(st, r2, lim)
	if st.HousekeepingText != 0 {
		t.Fatal("a batch with real work must clear the housekeeping text")
	}
}

func TestGuardrailInTheLoop(t *testing.T) {
	c := call("a", "read_file", loop.ArgsValid, false)
	r := toolsReply(c)
	var st TurnState
	verdicts := []turnapi.PlanAction{}
	for i := 0; i < 5; i++ {
		step, next := decide(st, r, lim)
		st = next
		verdicts = append(verdicts, step.Plan[0].Action)
		if step.StopAfter == StopGuardrailHalt {
			if step.Explanation == "" || step.Plan[0].Note == "" {
				t.Fatalf("halt without reason: %+v", step)
			}
			break
		}
		st.Guardrail = observeBatch(st.Guardrail, r, turnapi.ExecuteToolsResult{
			Outcomes: []turnapi.CallOutcome{{ID: "a", Failed: true, Digest: "x"}}})
	}
	want := []turnapi.PlanAction{turnapi.PlanRun, turnapi.PlanRun, turnapi.PlanRun, turnapi.PlanRun, turnapi.PlanBlocked}
	if !reflect.DeepEqual(verdicts, want) {
		t.Fatalf("actions = %v, want %v", verdicts, want)
	}
}

func TestFallBack(t *testing.T) {
	rate := temporal.NewApplicationError("429", "rate_limit")
	tests := []struct {
		name string
		st   TurnState
		err  error
		ok   bool
	}{
		{"rate limit with a fallback", TurnState{Providers: 2}, rate, true},
		{"billing", TurnState{Providers: 2}, temporal.NewApplicationError("402", "billing"), true},
		{"auth", TurnState{Providers: 3, Provider: 1}, temporal.NewApplicationError("401", "auth"), true},
		{"overloaded", TurnState{Providers: 2}, temporal.NewApplicationError("529", "overloaded"), true},
		{"a body that is not the protocol", TurnState{Providers: 2}, temporal.NewApplicationError("<html>", "invalid_response"), true},
		{"replies cut off on every attempt", TurnState{Providers: 2}, temporal.NewApplicationError("cut", "truncated_reply"), true},
		{"no fallback left", TurnState{Providers: 2, Provider: 1}, rate, false},
		{"bad request never falls back", TurnState{Providers: 2}, temporal.NewApplicationError("400", "bad_request"), false},
		{"not an application error", TurnState{Providers: 2}, errors.New("x"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, ok := fallBack(tt.st, tt.err)
			if ok != tt.ok || (ok && st.Provider != tt.st.Provider+1) {
				t.Fatalf("fallBack = %+v, %v", st, ok)
			}
		})
	}
}
