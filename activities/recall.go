package activities

import (
	"context"
	"errors"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/memory"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// recallFor is the block of recalled past conversations this call
// carries (memory.recall): the one stored for the turn, or, for the first
// call of a turn, what a prefetch finds for the turn's message within the
// budget, stored so that every call and every retry of the turn carries
// the same block. A prefetch that fails or runs out of time costs one
// warning: the call goes on without it.
func (a *Activities) recallFor(ctx context.Context, in turnapi.CallModelInput, history []models.Message) string {
	if a.Memory == nil || models.IsBackgroundSession(in.SessionID) {
		return ""
	}
	block, ok, err := a.Store.RecallBlock(ctx, in.TurnID)
	if err != nil {
		a.logger().Warn("recall: cannot read the turn's recalled block; the call goes on without it", "turn", in.TurnID, "error", err)
		return ""
	}
	if ok || in.Call != 1 {
		return block
	}
	at := turnMessageAt(history, in.TurnID)
	if at == len(history) {
		return ""
	}
	budget := a.RecallBudget
	if budget <= 0 {
		budget = config.DefaultPrefetchBudget
	}
	pctx, cancel := context.WithTimeout(ctx, budget)
	rec, err := a.Memory.Prefetch(pctx, memory.Query{SessionID: in.SessionID, Text: history[at].Content})
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
	if ctx.Err() != nil {
		return block
	}
	stored, err := a.Store.PutRecallBlock(ctx, in.SessionID, in.TurnID, block)
	if err != nil {
		a.logger().Warn("recall: cannot store the turn's recalled block", "turn", in.TurnID, "error", err)
		return block
	}
	return stored
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
