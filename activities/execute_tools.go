package activities

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/compress"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// ExecuteTools runs the tool calls of one assistant message as the plan says
// (one directly, several concurrently) and persists exactly one result per
// call id, in call order. Calls the plan rejects, skips or blocks are answered
// without running. A pluggable guardrail hook may warn about a call or halt
// the batch before anything runs.
func (a *Activities) ExecuteTools(ctx context.Context, in turnapi.ExecuteToolsInput) (turnapi.ExecuteToolsResult, error) {
	msg, err := a.Store.Message(ctx, in.AssistantMessageID)
	if err != nil {
		return turnapi.ExecuteToolsResult{}, fmt.Errorf("execute tools: load message %d: %w", in.AssistantMessageID, err)
	}
	if in.Reveal && msg.Hidden {
		if err := a.Store.RevealMessage(ctx, msg.ID); err != nil {
			return turnapi.ExecuteToolsResult{}, fmt.Errorf("execute tools: %w", err)
		}
	}
	plan := turnapi.PlanByID(in.Plan)
	var out turnapi.ExecuteToolsResult
	out.HookHalt = a.applyHook(msg.ToolCalls, plan)

	// A retried batch reuses the results it already stored: a tool that ran
	// and was recorded is never run again.
	stored, err := a.storedResults(ctx, in, msg.ToolCalls)
	if err != nil {
		return turnapi.ExecuteToolsResult{}, err
	}
	toRun, unsure, err := a.claim(ctx, in, msg.ToolCalls, plan, stored)
	if err != nil {
		return turnapi.ExecuteToolsResult{}, err
	}
	lineage, owner, ownerKnown := a.sessionKeys(ctx, in.SessionID)
	env := tools.Env{
		Workdir:     in.Workdir,
		SessionID:   in.SessionID,
		Owner:       owner,
		OwnerKnown:  ownerKnown,
		OutputsKey:  lineage,
		TurnID:      in.TurnID,
		ModelCall:   in.Call,
		Todos:       todoStore{a.Store},
		OutputDir:   a.outputDir(),
		Policy:      a.toolPolicy(),
		Allowed:     allowedTool(in.Tools),
		CommandGate: a.commandGate(in.ApprovalMode),
		Escalated:   escalated(toRun, in.ApprovalMode == "off" && a.approvalPolicy() == "off"),
	}
	// The tools run in work: they end when the attempt must, not when one
	// heartbeat went unanswered on a loaded machine.
	work, stop := a.heartbeat(ctx, func() any { return in.Call })
	pub := events.NewPublisher(a.Store, in.TurnID, events.WithLogger(a.logger()))
	for _, c := range toRun {
		pub.Publish(events.KindToolStart, toolEvent(c.ID, c.Name, c.Arguments, false))
	}
	// A command refused without running (blocked, denied, not approved) is
	// shown too: its tool_end carries the refusal.
	for _, tc := range msg.ToolCalls {
		_, done := stored[tc.ID]
		if p := plan.Get(tc.ID); p.Action == turnapi.PlanRefused && !done {
			pub.Publish(events.KindToolEnd, refusedEvent(tc.ID, tc.Function.Name, p.Note))
		}
	}
	ran := map[string]tools.Result{}
	batchBegan := time.Now()
	results := a.Tools.RunBatch(work, env, toRun)
	traceTools(ctx, batchBegan, results, a.toolNames())
	for _, r := range results {
		r = ExplainCancelled(r, work.Err())
		ran[r.CallID] = r
		pub.Publish(events.KindToolEnd, toolEvent(r.CallID, r.Name, "", r.IsError))
	}
	stop()
	a.closePublisher(ctx, pub)
	for id, r := range stored {
		ran[id] = r
		plan[id] = turnapi.CallPlan{ID: id, Action: turnapi.PlanRun}
	}
	for id, r := range unsure {
		ran[id] = r
	}
	// A delegation's tasks ran as child turns; its result is their report.
	for _, tc := range msg.ToolCalls {
		if p := plan.Get(tc.ID); p.Action == turnapi.PlanDelegated {
			if _, done := stored[tc.ID]; !done {
				// Read even when the batch was stopped: its results are stored.
				r, err := a.delegationResult(context.WithoutCancel(ctx), tc.ID, p.Tasks)
				if err != nil {
					return turnapi.ExecuteToolsResult{}, fmt.Errorf("execute tools: %w", err)
				}
				ran[tc.ID] = r
			}
		}
	}

	rows, summary := ComposeResults(in, msg.ToolCalls, plan, ran, a.allowed(in.Tools))
	a.countToolCalls(ctx, msg.ToolCalls, plan, ran, stored, unsure)
	out.Failed, out.Outcomes = summary.Failed, summary.Outcomes
	explanation := in.Explanation
	if explanation == "" && out.HookHalt != "" {
		explanation = turnapi.HaltExplanation(out.HookHalt)
	}
	if explanation != "" {
		rows = append(rows, models.Message{
			SessionID: in.SessionID, TurnID: in.TurnID, IdemKey: explanationKey(in.TurnID, in.Call),
			Role: openai.ChatMessageRoleAssistant, Content: explanation,
		})
	}
	// An interrupted batch still answers every call (the cancelled ones
	// included) before reporting the cancellation.
	saved, err := a.persistResults(ctx, in.Call, rows)
	if err != nil {
		return turnapi.ExecuteToolsResult{}, fmt.Errorf("execute tools: persist results: %w", err)
	}
	for _, m := range saved {
		out.ResultMessageIDs = append(out.ResultMessageIDs, m.ID)
	}
	out.AddedTokens = compress.EstimateTokens(rows, 0)
	return out, work.Err()
}

// ExplainCancelled rewrites the result of a call the batch's cancellation
// stopped (cause is the batch context's error) so the model reads why: the
// turn was interrupted, or the batch ran out of time, before or while the
// call ran. What a stopped call had reported (a command's output so far) is
// kept. Pure.
func ExplainCancelled(r tools.Result, cause error) tools.Result {
	if !r.Cancelled || cause == nil {
		return r
	}
	why := "the turn was interrupted"
	if errors.Is(cause, context.DeadlineExceeded) {
		why = "the tool batch ran out of time"
	}
	if r.NotStarted {
		r.Content = errorResult("cancelled: " + why + " before this call started; it was not run.")
		return r
	}
	r.Content = errorResult("interrupted: " + why + " while this call ran; it was stopped before it finished. It reported: " + r.Content)
	return r
}

// ComposeResults answers every call of a batch exactly once, in call order:
// with its run's result when the plan ran it, or with the plan's answer.
// ran holds the results of the calls that ran, by call id. Pure.
func ComposeResults(in turnapi.ExecuteToolsInput, calls []models.ToolCall, plan turnapi.PlanIndex, ran map[string]tools.Result, known []string) ([]models.Message, turnapi.ExecuteToolsResult) {
	var out turnapi.ExecuteToolsResult
	rows := make([]models.Message, 0, len(calls)+1)
	for _, tc := range calls {
		raw, failed := answer(tc, plan.Get(tc.ID), ran, known)
		if failed {
			out.Failed++
		}
		// The guardrail compares raw results: a warning added to the text
		// must not make an identical result look new.
		out.Outcomes = append(out.Outcomes, turnapi.CallOutcome{ID: tc.ID, Failed: failed, Digest: digest(raw)})
		content := raw
		if p := plan.Get(tc.ID); p.Action == turnapi.PlanRun && p.Note != "" {
			content += "\n\n[guardrail warning] " + p.Note
		}
		rows = append(rows, models.Message{
			SessionID:  in.SessionID,
			TurnID:     in.TurnID,
			IdemKey:    toolKey(in.TurnID, in.Call, tc.ID),
			Role:       openai.ChatMessageRoleTool,
			Content:    content,
			ToolCallID: tc.ID,
			Name:       tc.Function.Name,
		})
	}
	return rows, out
}

// ToolEvent is the data of a tool_start or tool_end event.
type ToolEvent struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Args   string `json:"args,omitempty"`
	Failed bool   `json:"failed,omitempty"`
	// Refused is the refusal the model reads for a command that was not
	// run (blocked, denied, not approved); empty for a call that ran.
	Refused string `json:"refused,omitempty"`
}

func refusedEvent(id, name, note string) string {
	data, _ := json.Marshal(ToolEvent{ID: id, Name: name, Failed: true, Refused: turnapi.BoundText(note, 600)})
	return string(data)
}

func toolEvent(id, name, args string, failed bool) string {
	if len(args) > 200 {
		args = args[:200] + "…"
	}
	data, _ := json.Marshal(ToolEvent{ID: id, Name: name, Args: args, Failed: failed})
	return string(data)
}

// toolPolicy is what this worker lets tools touch: Policy when the worker
// set it (from its own configuration, never a sender's: engine.ToolPolicy),
// else the safe default for Home.
func (a *Activities) toolPolicy() tools.Policy {
	if a.Policy != nil {
		return *a.Policy
	}
	return tools.Policy{Home: a.Home}
}

// escalated says which calls may run their command outside the sandbox:
// the terminal calls of the model's batch that ask for it, which the
// workflow runs only once their assessment (rule outside_sandbox) was
// approved by a person or a person's grant. With approvals off for the
// turn and the worker (unattended: nobody is asked) none may: stepping
// outside always takes a person. A call a program makes (execute_code's
// tool calls) never may (tools.Env is stripped of Escalated for them).
// Pure.
func escalated(batch []tools.Call, unattended bool) func(string) bool {
	ids := map[string]bool{}
	for _, c := range batch {
		if _, outside := tools.TerminalEscalation(c.Arguments); c.Name == "terminal" && outside && !unattended {
			ids[c.ID] = true
		}
	}
	return func(id string) bool { return ids[id] }
}

// OutcomeUnknown answers a call whose side effects may have happened: an
// earlier attempt claimed it and stopped before recording a result.
const OutcomeUnknown = "Outcome unknown: the previous attempt may or may not have taken effect " +
	"(an earlier attempt of this call did not record a result: its worker stopped or it ran too long). Check the current state before doing it again."

// claim records a claim on every call about to run, before any runs. A call
// an earlier attempt already claimed, without a stored result, runs again
// only if its tool is idempotent; otherwise it is answered OutcomeUnknown.
// The claims of a batch are one write.
func (a *Activities) claim(ctx context.Context, in turnapi.ExecuteToolsInput, calls []models.ToolCall, plan turnapi.PlanIndex, stored map[string]tools.Result) ([]tools.Call, map[string]tools.Result, error) {
	var claimed []models.ToolCall
	var keys []string
	for _, tc := range calls {
		if _, done := stored[tc.ID]; done || plan.Get(tc.ID).Action != turnapi.PlanRun {
			continue
		}
		claimed = append(claimed, tc)
		keys = append(keys, toolKey(in.TurnID, in.Call, tc.ID))
	}
	earlier, err := a.Store.ClaimTools(ctx, keys)
	if err != nil {
		return nil, nil, fmt.Errorf("execute tools: %w", err)
	}
	var run []tools.Call
	unsure := map[string]tools.Result{}
	for i, tc := range claimed {
		if earlier[i] && !a.idempotent(tc.Function.Name) {
			unsure[tc.ID] = tools.Result{CallID: tc.ID, Name: tc.Function.Name, Content: OutcomeUnknown, IsError: true}
			continue
		}
		run = append(run, tools.Call{ID: tc.ID, Name: tc.Function.Name, Arguments: loop.NormalizeArguments(tc.Function.Arguments)})
	}
	return run, unsure, nil
}

func (a *Activities) idempotent(name string) bool {
	t, ok := a.Tools.Lookup(name)
	return ok && t.Idempotent()
}

// storedResults returns the results of this batch already stored by an
// earlier attempt, by call id.
func (a *Activities) storedResults(ctx context.Context, in turnapi.ExecuteToolsInput, calls []models.ToolCall) (map[string]tools.Result, error) {
	out := map[string]tools.Result{}
	for _, tc := range calls {
		m, err := a.Store.MessageByKey(ctx, toolKey(in.TurnID, in.Call, tc.ID))
		if errors.Is(err, models.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("execute tools: look up stored result of %s: %w", tc.ID, err)
		}
		out[tc.ID] = tools.Result{CallID: tc.ID, Name: tc.Function.Name, Content: m.Content}
	}
	return out, nil
}

// applyHook asks the pluggable guardrail about every call planned to run,
// before any runs. A warning is added to the call's note; a halt blocks that
// call, skips every other call and returns the reason.
func (a *Activities) applyHook(calls []models.ToolCall, plan turnapi.PlanIndex) string {
	if a.Guardrail == nil {
		return ""
	}
	for _, tc := range calls {
		p := plan.Get(tc.ID)
		if p.Action != turnapi.PlanRun {
			continue
		}
		d := a.Guardrail.BeforeTool(loop.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		switch loop.Combine(d).Verdict {
		case loop.Warn:
			p.Note = joinNotes(p.Note, d.Reason)
			plan[tc.ID] = p
		case loop.Halt:
			ids := make([]string, 0, len(calls))
			for _, other := range calls {
				ids = append(ids, other.ID)
			}
			for _, p := range turnapi.HaltPlan(ids, tc.ID, d.Reason) {
				plan[p.ID] = p
			}
			return d.Reason
		}
	}
	return ""
}

// answer is the result text of one call and whether it counts as failed.
func answer(tc models.ToolCall, p turnapi.CallPlan, ran map[string]tools.Result, known []string) (string, bool) {
	switch p.Action {
	case turnapi.PlanRun, turnapi.PlanDelegated:
		r, ok := ran[tc.ID]
		if !ok {
			return errorResult("the tool call was not run"), true
		}
		return r.Content, r.IsError
	case turnapi.PlanUnknown:
		return UnknownToolMessage(tc.Function.Name, known), true
	case turnapi.PlanInvalidArgs:
		return InvalidArgumentsMessage(tc.Function.Name, tc.Function.Arguments), true
	case turnapi.PlanBlocked:
		return errorResult("blocked by a guardrail: " + p.Note), true
	case turnapi.PlanRefused:
		return p.Note, true
	case turnapi.PlanAnswer:
		return p.Note, false
	default:
		note := cmp.Or(p.Note, "Skipped: this call was not run.")
		return note, true
	}
}

// InvalidArgumentsMessage answers a call whose arguments the loop found
// invalid, saying why.
func InvalidArgumentsMessage(name, args string) string {
	problem := cmp.Or(loop.ArgumentsProblem(args), "not what its schema asks for")
	return errorResult(fmt.Sprintf("the arguments of this %s call are %s. Call it again with arguments that match its schema.", name, problem))
}

func (a *Activities) toolNames() []string {
	if a.Tools == nil {
		return nil
	}
	return a.Tools.Names()
}

// allowed is the registry's tool names limited to allow (empty: all).
func (a *Activities) allowed(allow []string) []string {
	names := a.toolNames()
	if len(allow) == 0 {
		return names
	}
	out := make([]string, 0, len(allow))
	for _, n := range names {
		if tools.Allows(allow, n) {
			out = append(out, n)
		}
	}
	return out
}

// UnknownToolMessage answers a call of a tool that does not exist.
func UnknownToolMessage(name string, available []string) string {
	return fmt.Sprintf("Tool '%s' does not exist. Available tools: %s", name, strings.Join(available, ", "))
}

func errorResult(msg string) string { return "Error: " + msg }

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// digest is a short hash of a result, for the guardrail's no-progress check.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// sessionKeys are what the store says of a session for its tool calls:
// its lineage (the root's id, itself when none is known), which keys the
// tool outputs a conversation keeps (a session made by a compaction reads
// what its parent kept), and its owner, and whether the owner is known
// (false when the session cannot be read).
func (a *Activities) sessionKeys(ctx context.Context, sessionID string) (lineage, owner string, ownerKnown bool) {
	lineage, owner, err := a.Store.SessionKeys(ctx, sessionID)
	if err != nil {
		return sessionID, "", false
	}
	return cmp.Or(lineage, sessionID), owner, true
}
