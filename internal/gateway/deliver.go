package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
	if strings.TrimSpace(text) == "" && len(in.Files) > 0 {
		return a.sendFiles(ctx, p, in)
	}
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
	if _, err := a.sendFiles(ctx, p, in); err != nil {
		return "", err
	}
	return first, nil
}

// sendFiles sends a delivery's files as documents, each once (the outbox
// records it under the delivery's key), and returns the id of the first.
// A platform that sends no files gets one line naming them instead.
func (a *chatActivities) sendFiles(ctx context.Context, p Platform, in workflows.ChatDeliverInput) (string, error) {
	fs, ok := p.(FileSender)
	if !ok && len(in.Files) > 0 {
		names := make([]string, len(in.Files))
		for i, f := range in.Files {
			names[i] = f.Name
		}
		note := fmt.Sprintf("(%s cannot carry files: %s not sent.)", p.Name(), strings.Join(names, ", "))
		id, _, err := a.sendOnce(ctx, p, in.Key+"/files", Outgoing{ChatID: in.ChatID}, p.Parts(note)[0], nil)
		return id, err
	}
	first := ""
	for i, f := range in.Files {
		key := fmt.Sprintf("%s/file/%d", in.Key, i)
		st := a.g.rt.Store
		id, sent, err := st.Sent(ctx, key)
		if err != nil {
			return "", err
		}
		if !sent {
			att, err := st.Attachment(ctx, f.ID)
			if err != nil {
				return "", temporal.NewNonRetryableApplicationError("load the file "+f.Name+": "+err.Error(), "Undeliverable", err)
			}
			id, err = fs.SendFile(ctx, Outgoing{ChatID: in.ChatID}, OutFile{ID: f.ID, Name: f.Name, MIME: f.MIME, Data: att.Data})
			if errors.Is(err, ErrUndeliverable) {
				return "", temporal.NewNonRetryableApplicationError(err.Error(), "Undeliverable", err)
			}
			if err != nil {
				return "", fmt.Errorf("send %s: %w", f.Name, err)
			}
			if err := st.RecordSent(ctx, key, id); err != nil {
				return "", err
			}
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
