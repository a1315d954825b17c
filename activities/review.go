package activities

import (
	"context"
	"fmt"
	"strings"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// reviewClip bounds each message shown to the reviewer.
const reviewClip = 1500

// PrepareReview stores, as the first message of the review session, the
// recent conversation to review (once, however often retried). The
// conversation goes from store to store: never through workflow history.
func (a *Activities) PrepareReview(ctx context.Context, in turnapi.PrepareReviewInput) error {
	// After a compaction the conversation goes on in the lineage's newest
	// session.
	tip, err := a.Store.Tip(ctx, in.SessionID)
	if err != nil {
		return fmt.Errorf("prepare review of %s: %w", in.SessionID, err)
	}
	msgs, err := a.Store.Messages(ctx, tip)
	if err != nil {
		return fmt.Errorf("prepare review of %s: %w", in.SessionID, err)
	}
	if n := in.MaxMessages; n > 0 && len(msgs) > n {
		msgs = msgs[len(msgs)-n:]
	}
	var b strings.Builder
	b.WriteString("Conversation to review (most recent part):\n\n")
	for _, m := range msgs {
		text := m.Content
		for _, c := range m.ToolCalls {
			text += fmt.Sprintf(" [called %s %s]", c.Function.Name, c.Function.Arguments)
		}
		if r := []rune(text); len(r) > reviewClip {
			text = string(r[:reviewClip]) + "…"
		}
		fmt.Fprintf(&b, "%s: %s\n", m.Role, text)
	}
	if _, err := a.Store.EnsureSession(ctx, in.ReviewSessionID, ""); err != nil {
		return fmt.Errorf("prepare review: %w", err)
	}
	_, err = a.Store.AppendMessages(ctx, []models.Message{{
		SessionID: in.ReviewSessionID, IdemKey: in.ReviewSessionID + "/transcript", Role: "user", Content: b.String(),
	}})
	if err != nil {
		return fmt.Errorf("prepare review: %w", err)
	}
	return nil
}
