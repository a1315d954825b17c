package activities

import (
	"context"
	"errors"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/compress"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/memory"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// CompressContext compacts a session's conversation into a new child
// session: the first messages and the last ones are copied verbatim (a tool
// call never separated from its results), the middle is replaced by a
// structured summary written by the model (updating the previous summary
// when there is one), with large old tool outputs pruned before the model
// sees them. The child gets a freshly built system prompt and the parent's
// todo list; the parent is left as it is. When the summariser fails (or
// in.SkipSummary), a static summary keeps the task instead.
//
// A retry finds the child made by an earlier attempt and returns it. A
// conversation too short to have a middle is not compacted.
func (a *Activities) CompressContext(ctx context.Context, in turnapi.CompressContextInput) (turnapi.CompressContextResult, error) {
	schema := a.schemaChars(in.Tools)
	tip, err := a.Store.Tip(ctx, in.SessionID)
	if err != nil {
		return turnapi.CompressContextResult{}, fmt.Errorf("compress context of %s: %w", in.SessionID, err)
	}
	if tip != in.SessionID {
		if err := a.copyTodos(ctx, in.SessionID, tip); err != nil {
			a.logger().Warn("the todo list did not follow the compaction", "session", tip, "error", err)
		}
		system, history, err := a.loadContext(ctx, tip)
		if err != nil {
			return turnapi.CompressContextResult{}, fmt.Errorf("compress context: %w", err)
		}
		return turnapi.CompressContextResult{SessionID: tip, Compacted: true, After: contextTokens(system, history, schema)}, nil
	}

	system, history, err := a.loadContext(ctx, in.SessionID)
	if err != nil {
		return turnapi.CompressContextResult{}, fmt.Errorf("compress context: %w", err)
	}
	res := turnapi.CompressContextResult{SessionID: in.SessionID, Before: contextTokens(system, history, schema)}
	plan := compress.Split(history, a.CompactKeepFirst, a.CompactKeepLast)
	if len(plan.Middle) == 0 {
		res.After = res.Before
		return res, nil
	}
	// The user watching the turn learns why it pauses.
	pub := events.NewPublisher(a.Store, in.TurnID, events.WithLogger(a.logger()))
	defer a.closePublisher(ctx, pub)
	pub.Publish(events.KindStatus, fmt.Sprintf("compacting the conversation (%d messages, ~%d tokens)", len(history), res.Before))

	previous := compress.PreviousSummary(append(append([]models.Message(nil), plan.Head...), plan.Middle...))
	summary, err := "", errors.New("the summariser is cooling down after a failure")
	if !in.SkipSummary {
		summary, res.Usage, err = a.summarise(ctx, in, compress.Prune(plan.Middle, a.CompactPruneChars), previous)
	}
	if err != nil {
		if ctx.Err() != nil {
			return turnapi.CompressContextResult{}, ctx.Err()
		}
		a.logger().Warn("context summary failed; using the static summary", "session", in.SessionID, "error", err)
		summary, res.Fallback, res.SummaryError = compress.FallbackSummary(plan.Head, plan.Middle), true, err.Error()
	}

	prompt := system
	if a.BuildPrompt != nil {
		if built, err := a.BuildPrompt(ctx, in.Model, in.Workdir); err == nil && built != "" {
			prompt = built
		} else if err != nil {
			a.logger().Warn("rebuilding the system prompt failed; keeping the old one", "session", in.SessionID, "error", err)
		}
	}
	msgs := compactedMessages(plan, in.TurnID, summary)
	child, err := a.Store.CompactSession(ctx, in.SessionID, prompt, msgs)
	if err != nil {
		return turnapi.CompressContextResult{}, fmt.Errorf("compress context of %s: %w", in.SessionID, err)
	}
	// The child exists from here on and the conversation goes on there, so
	// nothing after this point fails the compaction.
	if err := a.copyTodos(ctx, in.SessionID, child.ID); err != nil {
		a.logger().Warn("the todo list did not follow the compaction", "session", child.ID, "error", err)
	}
	res.SessionID, res.Compacted = child.ID, true
	if a.Summaries && !res.Fallback {
		// The compaction's summary is the summary of the session it ended:
		// recall needs no other model call.
		if _, err := a.SummarizeSession(ctx, turnapi.SummarizeSessionInput{SessionID: in.SessionID, Reason: string(memory.EndCompaction), Text: summary, Model: in.Model}); err != nil {
			a.logger().Warn("recall: the compaction's summary was not kept for the session", "session", in.SessionID, "error", err)
		}
	}
	res.After = contextTokens(prompt, msgs, schema) // the copies carry no usage: an estimate
	how := "summarised"
	if res.Fallback {
		how = "summarised without a model (the summary call failed)"
	}
	pub.Publish(events.KindStatus, fmt.Sprintf("conversation %s: %d middle messages replaced, ~%d tokens now, continued in session %s",
		how, len(plan.Middle), res.After, child.ID))
	return res, nil
}

// compactedMessages are the child session's messages: the head (without an
// older summary, which the new one updates), the summary as a user message,
// then the tail. Pure.
// The copies carry no token usage: what a provider reported for the longer
// conversation says nothing about the compacted one.
func compactedMessages(plan compress.Plan, turnID, summary string) []models.Message {
	out := make([]models.Message, 0, len(plan.Head)+1+len(plan.Tail))
	for _, m := range plan.Head {
		if !compress.IsSummary(m.Content) {
			out = append(out, withoutUsage(m))
		}
	}
	out = append(out, models.Message{TurnID: turnID, Role: openai.ChatMessageRoleUser, Content: summary})
	for _, m := range plan.Tail {
		out = append(out, withoutUsage(m))
	}
	return out
}

func withoutUsage(m models.Message) models.Message {
	m.PromptTokens, m.CompletionTokens = 0, 0
	return m
}

// summarise asks the model for the structured summary of middle. The call
// is bounded as CallModel's: it ends after in.IdleTimeout without progress,
// and a provider's Retry-After is reported capped at in.MaxRetryAfter.
func (a *Activities) summarise(ctx context.Context, in turnapi.CompressContextInput, middle []models.Message, previous string) (string, turnapi.Usage, error) {
	provider, err := a.provider(in.Model, in.Provider)
	if err != nil {
		return "", turnapi.Usage{}, err
	}
	req := llm.Request{Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: compress.SummaryRequest(middle, previous)},
	}}
	work, stop := a.heartbeat(ctx, func() any { return "summary" })
	reply, err := a.callModel(work, provider, req, llm.Options{IdleTimeout: orDefault(in.IdleTimeout, DefaultModelIdleTimeout)})
	stop()
	if err != nil {
		return "", turnapi.Usage{}, fmt.Errorf("summary call: %w", modelError(work, err, in.MaxRetryAfter))
	}
	// The call answered: it is recorded whatever became of the attempt.
	keep, cancel := storeContext(ctx)
	defer cancel()
	rec := callRecord{Key: activityKey(ctx, models.PurposeCompress), Purpose: models.PurposeCompress,
		SessionID: in.SessionID, TurnID: in.TurnID}
	usage, err := a.recordCall(keep, rec, provider, reply.Usage)
	if err != nil {
		return "", turnapi.Usage{}, fmt.Errorf("summary call: %w", err)
	}
	text, ok := compress.NormalizeSummary(reply.Content)
	if !ok {
		return "", usage, errors.New("the summariser replied with nothing")
	}
	return text, usage, nil
}

// copyTodos gives the child session the parent's todo list, unless the
// child has one already (a retry after the child moved on).
func (a *Activities) copyTodos(ctx context.Context, from, to string) error {
	have, err := a.Store.LoadTodosJSON(ctx, to)
	if err != nil {
		return fmt.Errorf("compress context: %w", err)
	}
	data, err := a.Store.LoadTodosJSON(ctx, from)
	if err != nil {
		return fmt.Errorf("compress context: %w", err)
	}
	if len(have) > 0 || len(data) == 0 {
		return nil
	}
	if err := a.Store.SaveTodosJSON(ctx, to, data); err != nil {
		return fmt.Errorf("compress context: copy todos to %s: %w", to, err)
	}
	return nil
}
