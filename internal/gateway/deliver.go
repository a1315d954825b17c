package gateway

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	turnacts "github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/workflows"
)

// registerDelivery registers the activity that sends results (a cron
// job's) to chats.
func (a *chatActivities) registerDelivery(w worker.ActivityRegistry) {
	w.RegisterActivityWithOptions(a.send, activity.RegisterOptions{Name: workflows.ChatSendName})
}

// send delivers a result to a chat under its title, each part once (the
// outbox records it under the delivery's key), and returns the id of the
// first message.
func (a *chatActivities) send(ctx context.Context, in workflows.ChatDeliverInput) (string, error) {
	p := a.g.platform(in.Platform)
	if p == nil {
		return "", temporal.NewApplicationError("no platform "+in.Platform+" connected in this gateway process", "NoPlatform")
	}
	text := in.Text
	if in.MessageID != 0 {
		m, err := a.g.rt.Store.Message(ctx, in.MessageID)
		if err != nil {
			return "", fmt.Errorf("load the result: %w", err)
		}
		text = turnacts.FinalText(m)
	}
	if in.Title != "" {
		text = "**" + escapeMarkdown(in.Title) + "**\n\n" + text
	}
	first := ""
	for i, part := range p.Parts(text) {
		id, _, err := a.sendOnce(ctx, p, fmt.Sprintf("%s/part/%d", in.Key, i), Outgoing{ChatID: in.ChatID}, part, nil)
		if errors.Is(err, ErrUndeliverable) {
			return "", temporal.NewNonRetryableApplicationError(err.Error(), "Undeliverable", err)
		}
		if err != nil {
			return "", err
		}
		if i == 0 {
			first = id
		}
	}
	return first, nil
}

// sendOnce sends part to m's chat unless the outbox holds key, and records
// it there; before (when set) runs just before a send. It returns the
// message's id (the one recorded when it was sent before, fresh false),
// also when recording it failed, with that error.
func (a *chatActivities) sendOnce(ctx context.Context, p Platform, key string, m Outgoing, part string, before func()) (id string, fresh bool, err error) {
	st := a.g.rt.Store
	id, sent, err := st.Sent(ctx, key)
	if err != nil || sent {
		return id, false, err
	}
	if before != nil {
		before()
	}
	if id, err = p.SendPart(ctx, m, part); err != nil {
		return "", false, err
	}
	return id, true, st.RecordSent(ctx, key, id)
}
