package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/talaria-agent/talaria/internal/memory"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// ResetPolicy says when a chat's next message starts a new session.
type ResetPolicy struct {
	// DailyHour is the hour of the day (local time) after which the first
	// message starts a new session; negative: never.
	DailyHour int
	// Idle starts a new session after this long without a message; 0:
	// never.
	Idle time.Duration
	// Location is the time zone of DailyHour (nil: the process's).
	Location *time.Location
}

// DefaultReset is Hermes' default: 04:00 every day, or after 24 idle hours.
var DefaultReset = ResetPolicy{DailyHour: 4, Idle: 24 * time.Hour}

// due reports whether a chat last active at last starts a new session with
// a message at now. Pure.
func (p ResetPolicy) due(last, now time.Time) bool {
	if last.IsZero() {
		return false
	}
	if p.Idle > 0 && now.Sub(last) >= p.Idle {
		return true
	}
	if p.DailyHour < 0 || p.DailyHour > 23 {
		return false
	}
	loc := cmp.Or(p.Location, time.Local)
	n := now.In(loc)
	boundary := time.Date(n.Year(), n.Month(), n.Day(), p.DailyHour, 0, 0, 0, loc)
	if n.Before(boundary) {
		boundary = boundary.AddDate(0, 0, -1)
	}
	return last.Before(boundary)
}

// generationID is the session id of a chat's n-th session. Pure.
func generationID(key string, n int) string {
	base := SessionID(key)
	if n == 0 {
		return base
	}
	if len(base) > 110 {
		base = base[:110]
	}
	return fmt.Sprintf("%s-g%d", base, n)
}

// chatOf is a chat's state: what the store holds, or its first session.
func (g *Gateway) chatOf(ctx context.Context, u Update) (models.Chat, error) {
	key := SessionKey(u.Chat, u.User, g.groups)
	c, ok, err := g.rt.Store.ChatState(ctx, key)
	if err != nil {
		return c, err
	}
	if !ok {
		c = models.Chat{Key: key, SessionID: generationID(key, 0)}
	}
	c.Target = u.Chat.Platform + ":" + u.Chat.ID
	return c, nil
}

// sessionOf is the session a chat's messages go to now, for a command
// that reads or changes it (/stop, /undo, /usage, approvals): refused
// (models.ErrOwned) when another owner holds it.
func (g *Gateway) sessionOf(ctx context.Context, u Update) (string, error) {
	c, err := g.chatOf(ctx, u)
	if err != nil {
		return "", err
	}
	if err := g.chatsOwn(ctx, c); err != nil {
		return "", err
	}
	return c.SessionID, nil
}

// chatsOwn is nil when the chat's session is the chat's or nobody's yet
// (not stored, or stored before sessions had owners); models.ErrOwned
// when another owner holds it.
func (g *Gateway) chatsOwn(ctx context.Context, c models.Chat) error {
	_, owner, err := g.rt.Store.SessionKeys(ctx, c.SessionID)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return nil
	case err != nil:
		return err
	case owner != "" && owner != c.Key:
		return fmt.Errorf("the chat's session %s: %w", c.SessionID, models.ErrOwned)
	}
	return nil
}

// newSession starts the chat's next session, linked to the one before,
// and marks the one before over: what the process tool runs for it is
// stopped (by the worker that runs it, within seconds).
func (g *Gateway) newSession(ctx context.Context, c models.Chat, now time.Time) (models.Chat, error) {
	// Only the chat's own session is retired: one another owner holds is
	// left as it is.
	if c.SessionID != "" && g.chatsOwn(ctx, c) == nil {
		if err := g.rt.Store.RetireLineage(ctx, c.SessionID); err != nil {
			return c, err
		}
	}
	c.Generation++
	c.Previous, c.SessionID = c.SessionID, generationID(c.Key, c.Generation)
	c.LastActive = now
	if err := g.rt.Store.SaveChat(ctx, c); err != nil {
		return c, err
	}
	g.summarizeEnded(ctx, c.Previous)
	return c, nil
}

// summarizeEnded starts the summary of a chat's session that a new one
// replaced (memory recall; off the reply's path, once per session).
func (g *Gateway) summarizeEnded(ctx context.Context, sessionID string) {
	if sessionID == "" || !g.rt.Config.Memory.Recall {
		return
	}
	if _, err := g.rt.StartSummary(ctx, sessionID, string(memory.EndReset)); err != nil && !errors.Is(err, models.ErrNotFound) {
		g.logger.Warn("memory: the ended session's summary was not started", "session", sessionID, "error", err)
	}
}

// messageSession is the session a new message goes to: a new one when the
// reset policy says so; the chat is marked active.
func (g *Gateway) messageSession(ctx context.Context, u Update, now time.Time) (models.Chat, error) {
	c, err := g.chatOf(ctx, u)
	if err != nil {
		return c, err
	}
	if g.resetOf(u.Chat.Platform).due(c.LastActive, now) {
		return g.newSession(ctx, c, now)
	}
	c.LastActive = now
	return c, g.rt.Store.SaveChat(ctx, c)
}

// notOwned is what a chat is told when its session belongs to another.
const notOwned = "This chat's session belongs to someone else: the message was not taken. Send /new to start a session of this chat's own."

// ownSession makes the chat's session the chat's before a message is
// handed to it (models.Store.EnsureOwnedSession): whatever the session
// recalls or searches is then this chat's alone. A session another owner
// holds takes no message (owned false): the sender is told, once, and the
// update is done with.
func (g *Gateway) ownSession(ctx context.Context, p Platform, u Update, c models.Chat) (owned bool, err error) {
	_, err = g.rt.Store.EnsureOwnedSession(ctx, c.SessionID, c.Key)
	if !errors.Is(err, models.ErrOwned) {
		return err == nil, err
	}
	g.logger.Error("gateway: the chat's session belongs to another owner; message not taken",
		"platform", p.Name(), "chat", c.Key, "session", c.SessionID)
	key := doneKey(p, u) + "/not-owned"
	if _, sent, err := g.rt.Store.Sent(ctx, key); err != nil || sent {
		return false, err
	}
	id, err := p.SendPart(ctx, Outgoing{ChatID: u.Chat.ID, ReplyTo: u.MessageID}, p.Parts(notOwned)[0])
	if err != nil {
		return false, fmt.Errorf("tell the chat its session is not its own: %w", err)
	}
	return false, g.rt.Store.RecordSent(ctx, key, id)
}

// resetOf is the session reset of a platform's chats.
func (g *Gateway) resetOf(platform string) ResetPolicy {
	if p, ok := g.platformReset[platform]; ok {
		return p
	}
	return g.reset
}

// running is the progress of the chat's running turn.
func (g *Gateway) running(ctx context.Context, u Update) (workflows.Progress, error) {
	session, err := g.sessionOf(ctx, u)
	if err != nil {
		return workflows.Progress{}, err
	}
	return g.rt.Running(ctx, session)
}

// waiting is the progress of the chat's turn that waits on a person: its
// running turn, or one of its delegated tasks waiting for an approval.
func (g *Gateway) waiting(ctx context.Context, u Update) (workflows.Progress, error) {
	session, err := g.sessionOf(ctx, u)
	if err != nil {
		return workflows.Progress{}, err
	}
	p, _, err := g.rt.Waiting(ctx, session)
	return p, err
}
