package gateway

import (
	"context"
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
	p := a.g.platforms[in.Platform]
	if p == nil {
		return "", temporal.NewNonRetryableApplicationError("no platform "+in.Platform+" in this gateway", "NoPlatform", nil)
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
		text = "**" + markdownLiteral(in.Title) + "**\n\n" + text
	}
	first := ""
	for i, part := range p.Parts(text) {
		key := fmt.Sprintf("%s/part/%d", in.Key, i)
		id, sent, err := a.g.rt.Store.Sent(ctx, key)
		if err != nil {
			return "", err
		}
		if !sent {
			if id, err = p.SendPart(ctx, Outgoing{ChatID: in.ChatID}, part); err != nil {
				return "", err
			}
			if err := a.g.rt.Store.RecordSent(ctx, key, id); err != nil {
				return "", err
			}
		}
		if i == 0 {
			first = id
		}
	}
	return first, nil
}

// markdownLiteral makes text literal in Markdown. Pure.
func markdownLiteral(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		switch r {
		case '\\', '*', '_', '`', '[', ']', '<', '>', '#', '~', '|':
			out = append(out, '\\')
		}
		out = append(out, r)
	}
	return string(out)
}
