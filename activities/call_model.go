package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/approval"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/transcript"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// ContinuationPrompt asks the model to go on after its answer hit the output
// limit. It is sent with the request only, never stored.
const ContinuationPrompt = "[System: Your previous response was cut off by the output length limit. " +
	"Continue exactly where you left off. Do not repeat what you already wrote.]"

// CallModel sends the session's stored messages to the model and persists the
// reply under the key (turn, call). A retry that finds the reply already
// stored returns it without calling the model again. Tool names are repaired
// and arguments checked before the reply is stored; a reply the loop will
// discard (empty, cut off, invalid arguments) is stored hidden.
func (a *Activities) CallModel(ctx context.Context, in turnapi.CallModelInput) (turnapi.CallModelResult, error) {
	key := replyKey(in.TurnID, in.Call)
	if stored, err := a.Store.MessageByKey(ctx, key); err == nil {
		res := a.describeReply(stored, a.recordedUsage(ctx, key, stored), false, in.Tools)
		system, history, err := a.loadCallContext(ctx, in.SessionID)
		if err != nil {
			return turnapi.CallModelResult{}, fmt.Errorf("call model: %w", err)
		}
		res.ContextTokens = contextTokens(system, history, a.schemaChars(in.Tools))
		return res, nil
	} else if !errors.Is(err, models.ErrNotFound) {
		return turnapi.CallModelResult{}, fmt.Errorf("call model: look up stored reply: %w", err)
	}

	if err := a.storeSteers(ctx, in); err != nil {
		return turnapi.CallModelResult{}, err
	}
	system, history, err := a.loadCallContext(ctx, in.SessionID)
	if err != nil {
		return turnapi.CallModelResult{}, fmt.Errorf("call model: %w", err)
	}
	provider, err := a.provider(in.Model, in.Provider)
	if err != nil {
		return turnapi.CallModelResult{}, err
	}
	// Only a conversation with pictures asks whether the model sees.
	sight := pictureSight{sees: hasPictures(history) && a.sees(ctx, provider), byAddress: wireOf(provider) != llm.WireOllama}
	recalled, recallUsage := a.recallFor(ctx, in, history)
	req, err := a.buildRequest(ctx, system, history, in, sight, recalled)
	if err != nil {
		return turnapi.CallModelResult{}, err
	}
	// The call runs in work: it ends when the attempt must, not when one
	// heartbeat went unanswered on a loaded machine.
	work, stop := a.heartbeat(ctx, func() any { return in.Call })
	// The events of this attempt begin with its KindAttempt: a door shows
	// the call's text anew, and a superseded attempt shows nothing more.
	pub := events.NewPublisher(a.Store, in.TurnID, events.WithLogger(a.logger()), events.WithAttempt(in.Call, attemptNumber(ctx)))
	idle := orDefault(in.IdleTimeout, DefaultModelIdleTimeout)
	slow := watchSlow(pub, slowModelAfter, idle)
	// An attempt a later one superseded (its heartbeat was refused while
	// it still ran) stops its request at its next piece of text.
	callCtx, cancelCall := context.WithCancelCause(work)
	reply, err := a.callModel(callCtx, provider, req, llm.Options{
		Stream: a.workerModel("").Stream, IdleTimeout: idle, OnChunk: slow.progress,
		OnDelta: func(d string) {
			if pub.Superseded() {
				cancelCall(errSuperseded)
				return
			}
			pub.Publish(events.KindDelta, d)
		},
	})
	if context.Cause(callCtx) == errSuperseded {
		err = errSuperseded
	}
	cancelCall(nil)
	slow.progress()
	stop()
	if err != nil {
		// A cut-off stream is not an answer, whatever text came before the
		// cut: the call is tried again, and when the attempts run out the
		// turn ends truncated. The text already shown is followed by a
		// notice of the next attempt.
		err = modelError(work, err, in.MaxRetryAfter)
		announceRetry(ctx, pub, err)
		a.closePublisher(ctx, pub)
		return turnapi.CallModelResult{}, err
	}
	a.closePublisher(ctx, pub)

	// The answer is in hand, and paid for: it is stored under its key
	// whatever became of this attempt meanwhile (a heartbeat a loaded
	// server was slow to take cancels the activity's context), so that no
	// later attempt asks the model for it again.
	keep, cancelKeep := storeContext(ctx)
	defer cancelKeep()
	call := a.callRow(keep, callRecord{Key: key, Purpose: models.PurposeTurn, SessionID: in.SessionID, TurnID: in.TurnID},
		provider, reply.Usage)
	content, calls := BoundReply(reply.Content, RepairCalls(transcript.ToolCallsFromOpenAI(reply.ToolCalls, fmt.Sprintf("call_%d_", in.Call)), a.allowed(in.Tools)))
	msg := models.Message{
		SessionID:        in.SessionID,
		TurnID:           in.TurnID,
		IdemKey:          key,
		Role:             openai.ChatMessageRoleAssistant,
		Content:          content,
		Reasoning:        reply.Reasoning,
		ToolCalls:        calls,
		FinishReason:     reply.FinishReason,
		PromptTokens:     int64(reply.Usage.PromptTokens),
		CompletionTokens: int64(reply.Usage.CompletionTokens),
		Replay:           replayText(reply.Replay),
	}
	msg.Hidden = classify(&msg).Discarded() || hasInvalidArgs(calls)
	// The reply and its usage are one write.
	rows, err := a.Store.AppendReply(keep, call, []models.Message{msg})
	if err != nil {
		return turnapi.CallModelResult{}, fmt.Errorf("call model: persist reply: %w", err)
	}
	usage := a.countCall(keep, provider, call).Add(recallUsage)
	res := a.describeReply(&rows[0], usage, false, in.Tools)
	if !rows[0].Hidden {
		history = append(history, rows[0])
	}
	res.ContextTokens = contextTokens(system, history, a.schemaChars(in.Tools))
	res.Model = provider.Model
	return res, nil
}

// usageOf is the usage stored with a reply (a retry reports it again).
func usageOf(m *models.Message) turnapi.Usage {
	return turnapi.Usage{PromptTokens: m.PromptTokens, CompletionTokens: m.CompletionTokens,
		TotalTokens: m.PromptTokens + m.CompletionTokens}
}

// storeSteers stores the steers delivered with this call, once.
func (a *Activities) storeSteers(ctx context.Context, in turnapi.CallModelInput) error {
	if len(in.Steers) == 0 {
		return nil
	}
	rows := make([]models.Message, 0, len(in.Steers))
	for i, text := range in.Steers {
		rows = append(rows, models.Message{
			SessionID: in.SessionID, TurnID: in.TurnID, IdemKey: steerKey(in.TurnID, in.Call, i),
			Role: openai.ChatMessageRoleUser, Content: text, Steer: true,
		})
	}
	if _, err := a.Store.AppendMessages(ctx, rows); err != nil {
		return fmt.Errorf("call model: store steers: %w", err)
	}
	return nil
}

// RepairCalls maps each call's name to a known tool where it can; an unknown
// name is kept as sent, so the model sees what it asked for. Pure.
func RepairCalls(calls []models.ToolCall, known []string) []models.ToolCall {
	for i := range calls {
		if len(calls[i].Function.Name) > maxRepairName {
			continue // no tool name is that long, however repaired
		}
		if name, ok := loop.RepairToolName(calls[i].Function.Name, known); ok {
			calls[i].Function.Name = name
		}
	}
	return calls
}

// maxRepairName is the longest name tool-name repair looks at: longer ones
// are unknown as sent (repair's cost grows with the name).
const maxRepairName = 4096

// hasInvalidArgs: a reply the loop re-asks silently is kept out of the
// conversation until the loop decides to answer it.
func hasInvalidArgs(calls []models.ToolCall) bool {
	return slices.ContainsFunc(calls, func(c models.ToolCall) bool { return loop.CheckArguments(c.Function.Arguments) != loop.ArgsValid })
}

// classify computes the reply's kind from the stored message.
func classify(m *models.Message) loop.ReplyKind {
	visible := transcript.StripThinking(m.Content)
	reasoning := len(m.Reasoning)
	if visible == "" && strings.TrimSpace(m.Content) != "" {
		reasoning += len(m.Content) // inline reasoning blocks only
	}
	truncated := 0
	for _, c := range m.ToolCalls {
		if loop.CheckArguments(c.Function.Arguments) == loop.ArgsTruncated {
			truncated++
		}
	}
	return loop.ClassifyReply(loop.ReplyShape{
		VisibleChars: len(visible), ReasoningChars: reasoning, ToolCalls: len(m.ToolCalls),
		TruncatedArgs: truncated, FinishReason: m.FinishReason,
	})
}

// describeReply builds the activity result from a stored reply.
func (a *Activities) describeReply(m *models.Message, usage turnapi.Usage, recovered bool, allow []string) turnapi.CallModelResult {
	res := DescribeReplyIn(m, a.allowed(allow), a.commandsRun())
	res.Usage, res.Recovered = usage, recovered
	for i := range res.ToolCalls {
		res.ToolCalls[i].Quick = !res.ToolCalls[i].Unknown && a.Tools.Quick(res.ToolCalls[i].Name)
	}
	return res
}

// DescribeReplyIn is the loop's view of a stored reply, given the known
// tool names: its kind, the visible text length and each call's name,
// validity and guardrail key, a command's risk assessed for where w says
// it runs (approval.AssessIn). Pure.
func DescribeReplyIn(m *models.Message, known []string, w approval.Where) turnapi.CallModelResult {
	res := turnapi.CallModelResult{
		MessageID:      m.ID,
		FinishReason:   m.FinishReason,
		Kind:           classify(m),
		Hidden:         m.Hidden,
		TextChars:      len(transcript.StripThinking(m.Content)),
		ReasoningChars: len(m.Reasoning),
	}
	for _, tc := range m.ToolCalls {
		isKnown := false
		if len(tc.Function.Name) <= maxRepairName {
			_, isKnown = loop.RepairToolName(tc.Function.Name, known)
		}
		ref := turnapi.ToolCallRef{
			ID:      tc.ID, // bounded when stored (transcript.MaxToolCallIDLen)
			Name:    tc.Function.Name,
			Unknown: !isKnown || tc.Function.Name == "",
			Args:    loop.CheckArguments(tc.Function.Arguments),
			Key:     callDigest(tc.Function.Name, tc.Function.Arguments),
		}
		if ref.Unknown {
			// A name as sent may be anything: the ref keeps its beginning.
			ref.Name = turnapi.BoundText(ref.Name, turnapi.MaxNameBytes)
		}
		describeCallIn(&ref, tc.Function.Arguments, w)
		res.ToolCalls = append(res.ToolCalls, ref)
	}
	fitRefs(res.ToolCalls)
	return res
}

// describeCallIn adds what the workflow needs to decide on a call before
// it runs: a terminal command's risk where w says it runs, a clarify
// call's question.
func describeCallIn(ref *turnapi.ToolCallRef, args string, w approval.Where) {
	assessCommand := func(ref *turnapi.ToolCallRef, text string) { assessCommandIn(ref, text, w) }
	switch ref.Name {
	case "terminal":
		if cmd, workdir, ok := tools.TerminalCall(args); ok {
			// A workdir argument is where the command runs: it is assessed
			// (and shown) as a cd before the command.
			text := tools.TerminalAssessText(cmd, workdir)
			if reason, outside := tools.TerminalEscalation(args); outside {
				assessCommandIn(ref, text, approval.Where{})
				ref.Risk = approval.Escalation(ref.Risk, text, reason)
				ref.Risk.Pattern = boundPattern(ref.Risk.Pattern)
				ref.Risk.Reason = turnapi.BoundText(ref.Risk.Reason, maxReasonBytes)
				ref.Command = clipMiddle(text, 300, 200)
				break
			}
			assessCommand(ref, text)
		}
	case tools.ExecuteCodeName:
		// A program is assessed as the command that would run it
		// (python3 -c CODE, node -e CODE, or the Bash program itself).
		if cmd, workdir, ok := tools.CodeCall(args); ok {
			assessCommand(ref, tools.TerminalAssessText(cmd, workdir))
		}
	case "process":
		// A start is assessed as the terminal command it runs.
		if cmd, workdir, ok := tools.ProcessCall(args); ok {
			assessCommand(ref, tools.TerminalAssessText(cmd, workdir))
		}
	case tools.ClarifyName:
		if q, ok := tools.ParseClarify(args); ok {
			ref.Question, ref.Choices = turnapi.BoundText(q.Question, turnapi.MaxQuestionBytes), boundChoices(q.Choices)
		} else {
			ref.Args = loop.ArgsInvalid
		}
	}
}

// assessCommandIn sets the risk of a call that runs the shell command
// text where w says.
func assessCommandIn(ref *turnapi.ToolCallRef, text string, w approval.Where) {
	ref.Risk = approval.AssessIn(text, w)
	// The pattern keys grants and the reason is shown; both may quote the
	// command (approval.MaxPattern bounds the pattern's bytes, not their
	// JSON escapes).
	ref.Risk.Pattern = boundPattern(ref.Risk.Pattern)
	ref.Risk.Reason = turnapi.BoundText(ref.Risk.Reason, maxReasonBytes)
	if ref.Risk.Risk != turnapi.RiskSafe {
		ref.Command = clipMiddle(text, 300, 200)
	}
}

// Bounds of a terminal call's assessment in a ref, in encoded bytes.
const (
	maxPatternBytes = 512
	maxReasonBytes  = 500
)

// boundPattern is an approval pattern fit for history: as it is when it
// encodes within maxPatternBytes, else its beginning and a digest of the
// whole, so that it still tells commands apart. Pure.
func boundPattern(p string) string {
	if turnapi.JSONLen(p) <= maxPatternBytes {
		return p
	}
	sum := sha256.Sum256([]byte(p))
	head, _ := turnapi.ClipJSON(p, maxPatternBytes-100)
	return head + " … sha256:" + hex.EncodeToString(sum[:16])
}

// boundChoices keeps at most MaxChoices choices of MaxChoiceBytes each,
// cut with a note: a person still sees that there was more. Pure.
func boundChoices(choices []string) []string {
	if len(choices) == 0 {
		return choices
	}
	n := min(len(choices), turnapi.MaxChoices)
	out := make([]string, 0, n)
	for _, c := range choices[:n] {
		out = append(out, turnapi.BoundText(c, turnapi.MaxChoiceBytes))
	}
	return out
}

// clipMiddle keeps the first head and last tail bytes of a long s (at
// character boundaries) and says how much it left out between them, so a
// person approving a long command still sees how it ends.
func clipMiddle(s string, head, tail int) string {
	if len(s) <= head+tail+40 {
		return s
	}
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	from := len(s) - tail
	for from < len(s) && !utf8.RuneStart(s[from]) {
		from++
	}
	return fmt.Sprintf("%s … [%d bytes not shown] … %s", s[:head], from-head, s[from:])
}

// clip cuts s to at most n bytes, at a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// callDigest is a short, stable digest of a call's name and canonical
// arguments: the guardrail's key without carrying the arguments around.
func callDigest(name, args string) string {
	sum := sha256.Sum256([]byte(loop.CallKey(loop.ToolCall{Name: name, Arguments: args})))
	return hex.EncodeToString(sum[:12])
}

// buildRequest assembles the chat request from stored history and the
// request-only additions of this call; the pictures of user messages are
// shown to a model that sees (sight), and named to one that does not. A
// recalled block (memory recall) goes just before the turn's message.
func (a *Activities) buildRequest(ctx context.Context, system string, history []models.Message, in turnapi.CallModelInput, sight pictureSight, recalled string) (llm.Request, error) {
	msgs := make([]openai.ChatCompletionMessage, 0, len(history)+3)
	if system != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: system})
	}
	pics, err := a.pictures(ctx, history, sight)
	if err != nil {
		return llm.Request{}, err
	}
	convert := func(from int) func(i int, m models.Message) openai.ChatCompletionMessage {
		return func(i int, m models.Message) openai.ChatCompletionMessage {
			return PicturedMessage(m, pics[from+i], sight.sees)
		}
	}
	at := len(history)
	if recalled != "" {
		at = turnMessageAt(history, in.TurnID)
	}
	msgs = append(msgs, transcript.ToOpenAIWith(history[:at], convert(0))...)
	if at < len(history) {
		msgs = append(msgs, recallMessage(recalled))
		msgs = append(msgs, transcript.ToOpenAIWith(history[at:], convert(at))...)
	}
	if len(in.ContinueFrom) > 0 {
		text, err := a.joinParts(ctx, in.ContinueFrom)
		if err != nil {
			return llm.Request{}, err
		}
		msgs = append(msgs,
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: text},
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: ContinuationPrompt})
	}
	if in.ExtraUserMessage != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: in.ExtraUserMessage})
	}
	if in.PrefillFrom != 0 {
		m, err := a.Store.Message(ctx, in.PrefillFrom)
		if err != nil {
			return llm.Request{}, fmt.Errorf("call model: load prefill %d: %w", in.PrefillFrom, err)
		}
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: prefillText(m)})
	}
	req := llm.Request{Messages: transcript.Repair(msgs), MaxTokens: a.workerModel("").MaxTokens, Replay: replays(history)}
	if in.MaxTokens > 0 {
		req.MaxTokens = in.MaxTokens
	}
	if in.ToolsEnabled && a.Tools != nil {
		req.Tools = a.Tools.DefinitionsFor(in.Tools)
	}
	return req, nil
}

// prefillText is the reasoning of a reasoning-only reply, as the opening of
// the assistant's answer.
func prefillText(m *models.Message) string {
	if m.Reasoning != "" {
		return "<think>\n" + m.Reasoning + "\n</think>\n"
	}
	return m.Content
}

// joinParts concatenates stored replies' visible text, in order.
func (a *Activities) joinParts(ctx context.Context, ids []int64) (string, error) {
	var b strings.Builder
	for _, id := range ids {
		m, err := a.Store.Message(ctx, id)
		if err != nil {
			return "", fmt.Errorf("load answer part %d: %w", id, err)
		}
		b.WriteString(transcript.RemoveThinking(m.Content))
	}
	return strings.TrimSpace(b.String()), nil
}

// provider resolves the index-th provider for model (0: primary).
func (a *Activities) provider(model string, index int) (llm.Endpoint, error) {
	list, err := a.providers(model)
	if err != nil {
		return llm.Endpoint{}, err
	}
	if index < 0 || index >= len(list) {
		index = len(list) - 1
	}
	return list[index], nil
}

func (a *Activities) providers(model string) ([]llm.Endpoint, error) {
	if a.Providers == nil {
		return nil, temporal.NewNonRetryableApplicationError(
			"no model endpoint is configured on this worker", string(turnapi.ClassAuth), nil)
	}
	list, err := a.Providers(model)
	if err == nil && len(list) == 0 {
		err = errors.New("no model provider is configured")
	}
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), string(turnapi.ClassAuth), err)
	}
	return list, nil
}

// attemptNumber is the activity's attempt number (1 outside an activity).
func attemptNumber(ctx context.Context) int {
	n, _ := attemptOf(ctx)
	return int(n)
}

// errSuperseded ends an attempt of a model call a later attempt replaced.
var errSuperseded = temporal.NewNonRetryableApplicationError("a later attempt of this model call began; this one stopped", "Superseded", nil)
