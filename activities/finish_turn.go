package activities

import (
	"context"
	"fmt"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/transcript"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// FinishTurn records how the turn ended and names the final answer: its
// message id, and its text when small (else a clipped preview; the store has
// it all), so the result stays small whatever the model wrote.
func (a *Activities) FinishTurn(ctx context.Context, in turnapi.FinishTurnInput) (turnapi.FinishTurnResult, error) {
	var res turnapi.FinishTurnResult
	var text string
	if len(in.FinalParts) > 0 {
		full, id, err := a.finalText(ctx, in)
		if err != nil {
			return res, fmt.Errorf("finish turn %s: %w", in.TurnID, err)
		}
		text, res.HasFinal, res.FinalMessageID = full, true, id
		res.FinalResponse, res.Clipped = previewOf(full)
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
		FinalResponse:    text,
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
	a.Metrics.TurnEnded(ctx, in.ExitReason)
	a.logTurnEnd(ctx, in)
	// The last live event: followers stop here.
	if err := a.Store.AppendEvents(ctx, []models.Event{{TurnID: in.TurnID, Kind: events.KindDone, Data: in.ExitReason}}); err != nil {
		a.logger().Debug("live done event not written", "turn", in.TurnID, "error", err)
	}
	return res, nil
}

// finalText is the final answer's text and the message holding it. A single
// visible reply is the answer as stored; parts of an answer continued past
// the output limit are joined into one new visible assistant message (once,
// however often retried).
func (a *Activities) finalText(ctx context.Context, in turnapi.FinishTurnInput) (string, int64, error) {
	if len(in.FinalParts) == 1 {
		m, err := a.Store.Message(ctx, in.FinalParts[0])
		if err != nil {
			return "", 0, fmt.Errorf("load final message: %w", err)
		}
		if !m.Hidden {
			return transcript.StripThinking(m.Content), m.ID, nil
		}
	}
	text, err := a.joinParts(ctx, in.FinalParts)
	if err != nil {
		return "", 0, err
	}
	if err := a.Store.HideMessages(ctx, in.FinalParts); err != nil {
		return "", 0, err
	}
	rows, err := a.Store.AppendMessages(ctx, []models.Message{{
		SessionID: in.SessionID, TurnID: in.TurnID, IdemKey: finalKey(in.TurnID),
		Role: "assistant", Content: text, FinishReason: "stop",
	}})
	if err != nil {
		return "", 0, fmt.Errorf("store the joined final answer: %w", err)
	}
	return text, rows[0].ID, nil
}

// FinalText is the full text of a final answer stored as message id, as
// FinishTurn computed it (reasoning blocks removed).
func FinalText(m *models.Message) string { return transcript.StripThinking(m.Content) }

// logTurnEnd says in one line how a turn ended: its session, turn and stop
// reason (and the error of a failed turn).
func (a *Activities) logTurnEnd(ctx context.Context, in turnapi.FinishTurnInput) {
	attrs := []any{"session", in.SessionID, "turn", in.TurnID, "number", in.TurnNumber, "status", in.Status,
		"stop_reason", in.ExitReason, "model_calls", in.APICalls}
	if in.Error != "" {
		attrs = append(attrs, "error", turnapi.BoundText(in.Error, 300))
	}
	a.logger().InfoContext(ctx, "turn ended", attrs...)
}
