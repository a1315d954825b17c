package activities

import (
	"context"
	"fmt"

	"github.com/talaria-agent/talaria/events"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/transcript"
)

// FinishTurn records how the turn ended and returns the final answer's text.
func (a *Activities) FinishTurn(ctx context.Context, in FinishTurnInput) (FinishTurnResult, error) {
	var res FinishTurnResult
	if len(in.FinalParts) > 0 {
		text, err := a.finalText(ctx, in)
		if err != nil {
			return res, fmt.Errorf("finish turn %s: %w", in.TurnID, err)
		}
		res.FinalResponse, res.HasFinal = text, true
	}
	ended := in.EndedAt
	err := a.Store.UpsertTurn(ctx, models.Turn{
		ID:               in.TurnID,
		SessionID:        in.SessionID,
		Number:           in.TurnNumber,
		Model:            in.Model,
		Status:           in.Status,
		ExitReason:       in.ExitReason,
		Error:            in.Error,
		FinalResponse:    res.FinalResponse,
		APICalls:         in.APICalls,
		PromptTokens:     in.Usage.PromptTokens,
		CompletionTokens: in.Usage.CompletionTokens,
		TotalTokens:      in.Usage.TotalTokens,
		StartedAt:        in.StartedAt,
		EndedAt:          &ended,
	})
	if err != nil {
		return res, fmt.Errorf("finish turn %s: %w", in.TurnID, err)
	}
	// The last live event: followers stop here.
	if err := a.Store.AppendEvents(ctx, []models.Event{{TurnID: in.TurnID, Kind: events.KindDone, Data: in.ExitReason}}); err != nil {
		a.logger().Debug("live done event not written", "turn", in.TurnID, "error", err)
	}
	return res, nil
}

// finalText is the final answer's text. A single visible reply is the answer
// as stored; parts of an answer continued past the output limit are joined
// into one new visible assistant message (once, however often retried).
func (a *Activities) finalText(ctx context.Context, in FinishTurnInput) (string, error) {
	if len(in.FinalParts) == 1 {
		m, err := a.Store.Message(ctx, in.FinalParts[0])
		if err != nil {
			return "", fmt.Errorf("load final message: %w", err)
		}
		if !m.Hidden {
			return transcript.StripThinking(m.Content), nil
		}
	}
	text, err := a.joinParts(ctx, in.FinalParts)
	if err != nil {
		return "", err
	}
	if err := a.Store.HideMessages(ctx, in.FinalParts); err != nil {
		return "", err
	}
	_, err = a.Store.AppendMessages(ctx, []models.Message{{
		SessionID: in.SessionID, TurnID: in.TurnID, IdemKey: finalKey(in.TurnID),
		Role: "assistant", Content: text, FinishReason: "stop",
	}})
	if err != nil {
		return "", fmt.Errorf("store the joined final answer: %w", err)
	}
	return text, nil
}
