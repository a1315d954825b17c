package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/memory"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// recallFor is the block of recalled past conversations this call
// carries (memory.recall): the one stored for the turn, or, for the first
// call of a turn, what a prefetch finds for the turn's message within the
// budget, stored so that every call and every retry of the turn carries
// the same block. A prefetch that fails or runs out of time costs one
// warning and one notice on the turn's events: the call goes on without
// it. The usage is the auxiliary model's, when it was asked (expand).
func (a *Activities) recallFor(ctx context.Context, in turnapi.CallModelInput, history []models.Message) (string, turnapi.Usage) {
	var used turnapi.Usage
	if a.Memory == nil || models.IsBackgroundSession(in.SessionID) {
		return "", used
	}
	block, ok, err := a.Store.RecallBlock(ctx, in.TurnID)
	if err != nil {
		a.logger().Warn("recall: cannot read the turn's recalled block; the call goes on without it", "turn", in.TurnID, "error", err)
		return "", used
	}
	if ok || in.Call != 1 {
		return block, used
	}
	at := turnMessageAt(history, in.TurnID)
	if at == len(history) {
		return "", used
	}
	budget := a.RecallBudget
	if budget <= 0 {
		budget = config.DefaultPrefetchBudget
	}
	owner, known, err := a.ownerOf(ctx, in.SessionID)
	if err != nil || !known {
		a.logger().Warn("recall: whose session this is is not known; the call goes on without recall", "turn", in.TurnID, "error", err)
		return "", used
	}
	pctx, cancel := context.WithTimeout(ctx, budget)
	q := memory.Query{SessionID: in.SessionID, User: owner, Text: history[at].Content}
	q.Expansions, used = a.expand(pctx, in, q.Text, budget)
	rec, err := a.Memory.Prefetch(pctx, q)
	late := errors.Is(pctx.Err(), context.DeadlineExceeded)
	cancel()
	switch {
	case err != nil && late:
		a.logger().Warn("recall: the prefetch took longer than its budget; the call goes on without it",
			"provider", a.Memory.Name(), "budget", budget, "turn", in.TurnID)
	case err != nil:
		a.logger().Warn("recall: the prefetch failed; the call goes on without it", "provider", a.Memory.Name(), "turn", in.TurnID, "error", err)
	default:
		block = memory.RenderBlock(rec, a.recallBytes())
	}
	if err != nil {
		a.notify(ctx, in.TurnID, prefetchNotice(a.Memory.Name(), budget, late))
	}
	if ctx.Err() != nil {
		return block, used
	}
	stored, err := a.Store.PutRecallBlock(ctx, in.SessionID, in.TurnID, block)
	if err != nil {
		a.logger().Warn("recall: cannot store the turn's recalled block", "turn", in.TurnID, "error", err)
		return block, used
	}
	return stored, used
}

// prefetchNotice is the one line telling that a prefetch was skipped, and
// why. Pure.
func prefetchNotice(provider string, budget time.Duration, late bool) string {
	if late {
		return fmt.Sprintf("past conversations not recalled: %s did not answer within %s; this answer goes on without them", provider, budget)
	}
	return fmt.Sprintf("past conversations not recalled: %s failed (see the log); this answer goes on without them", provider)
}

// notify publishes one status line on the turn's events (a door shows it
// beside the turn); a failure to publish is a debug line.
func (a *Activities) notify(ctx context.Context, turnID, text string) {
	pub := events.NewPublisher(a.Store, turnID, events.WithLogger(a.logger()))
	pub.Publish(events.KindStatus, text)
	a.closePublisher(ctx, pub)
}

// expand is the auxiliary model's questions like the turn's message, for a
// provider that searches with them; nil without an auxiliary model, or
// when it fails or takes more than half the budget (one warning line).
// Its usage is recorded like every model call's, and returned: the turn
// counts it (a goal's cost bound too).
func (a *Activities) expand(ctx context.Context, in turnapi.CallModelInput, text string, budget time.Duration) ([]string, turnapi.Usage) {
	searcher, ok := a.Memory.(memory.ExpansionSearcher)
	if a.Auxiliary == nil || !ok || !searcher.SearchesExpansions() || strings.TrimSpace(text) == "" {
		return nil, turnapi.Usage{}
	}
	ectx, cancel := context.WithTimeout(ctx, budget/2)
	defer cancel()
	req := llm.Request{MaxTokens: memory.ExpansionMaxTokens, Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: memory.ExpansionRequest(text)},
	}}
	reply, err := a.callModel(ectx, *a.Auxiliary, req, llm.Options{IdleTimeout: budget / 2})
	if err != nil {
		a.logger().Warn("recall: the auxiliary model wrote no questions; recall searches with the message alone",
			"model", a.Auxiliary.Model, "turn", in.TurnID, "error", err)
		return nil, turnapi.Usage{}
	}
	keep, cancelKeep := storeContext(ctx)
	defer cancelKeep()
	// Each attempt that asked is recorded: a retry asks again.
	key := fmt.Sprintf("%s:%d", activityKey(ctx, models.PurposeExpansion), attemptNumber(ctx))
	rec := callRecord{Key: key, Purpose: models.PurposeExpansion, SessionID: in.SessionID, TurnID: in.TurnID}
	used, err := a.recordCall(keep, rec, *a.Auxiliary, reply.Usage)
	if err != nil {
		a.logger().Warn("recall: the auxiliary model's usage was not recorded", "turn", in.TurnID, "error", err)
	}
	return memory.ParseExpansions(reply.Content, text), used
}

func (a *Activities) recallBytes() int {
	if a.RecallBytes > 0 {
		return a.RecallBytes
	}
	return config.DefaultRecallBytes
}

// turnMessageAt is the index in history of the turn's message (its first
// user message that is not a steer); len(history) when there is none. Pure.
func turnMessageAt(history []models.Message, turnID string) int {
	for i, m := range history {
		if m.TurnID == turnID && m.Role == openai.ChatMessageRoleUser && !m.Steer {
			return i
		}
	}
	return len(history)
}

// recallMessage is the request-only message carrying a recalled block.
func recallMessage(block string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: block}
}
