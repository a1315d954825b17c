package activities

import (
	"context"
	"fmt"

	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/transcript"
)

// FinishTurn records how the turn ended and returns the final answer's text.
func (a *Activities) FinishTurn(ctx context.Context, in FinishTurnInput) (FinishTurnResult, error) {
	var res FinishTurnResult
	if in.FinalMessageID != 0 {
		msg, err := a.Store.Message(ctx, in.FinalMessageID)
		if err != nil {
			return res, fmt.Errorf("finish turn %s: load final message: %w", in.TurnID, err)
		}
		res.FinalResponse = transcript.StripThinking(msg.Content)
		res.HasFinal = true
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
	return res, nil
}
