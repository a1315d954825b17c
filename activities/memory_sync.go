package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/memory"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// memoryCallTimeout bounds one call of the memory provider made off a
// reply's path (a turn's sync, a session's end).
const memoryCallTimeout = 30 * time.Second

// SyncMemory records a finished turn with the memory provider: the turn's
// message and its answer, read from the store. It runs after the turn's
// reply (MemorySyncWorkflow), so the reply never waits for it. A provider
// that fails costs one warning line and nothing else; only a store that
// cannot be read fails the activity.
func (a *Activities) SyncMemory(ctx context.Context, in turnapi.SyncMemoryInput) error {
	if a.Memory == nil || models.IsBackgroundSession(in.SessionID) {
		return nil
	}
	var msgs []models.Message
	for _, id := range sessionsOfTurn(in) {
		got, err := a.Store.Messages(ctx, id)
		if err != nil {
			return fmt.Errorf("sync turn %s to memory: %w", in.TurnID, err)
		}
		msgs = append(msgs, got...)
	}
	t, ok := finishedTurn(msgs, in.TurnID)
	if !ok {
		return nil // nothing of the turn is left (deleted, or no answer)
	}
	t.SessionID, t.TurnID = in.SessionID, in.TurnID
	owner, ok, err := a.ownerOf(ctx, in.SessionID)
	if err != nil {
		return fmt.Errorf("sync turn %s to memory: %w", in.TurnID, err)
	}
	if !ok {
		return nil // deleted meanwhile: nobody to file it under
	}
	t.User = owner
	sctx, cancel := context.WithTimeout(ctx, memoryCallTimeout)
	defer cancel()
	if err := a.Memory.Sync(sctx, t); err != nil {
		a.logger().Warn("memory: the turn was not recorded by the memory provider", "provider", a.Memory.Name(),
			"session", in.SessionID, "turn", in.TurnID, "error", err)
	}
	return nil
}

// sessionsOfTurn are the sessions holding a turn's messages: its
// conversation's, and the one it went on in after a compaction. Pure.
func sessionsOfTurn(in turnapi.SyncMemoryInput) []string {
	if in.ActiveSessionID == "" || in.ActiveSessionID == in.SessionID {
		return []string{in.SessionID}
	}
	return []string{in.SessionID, in.ActiveSessionID}
}

// finishedTurn is what Sync records of turnID in msgs: its message (the
// first user message of the turn that is not a steer) and its answer (the
// last assistant message of the turn with text and no tool calls), dated
// by the answer; false when the turn has no answer. Pure.
func finishedTurn(msgs []models.Message, turnID string) (memory.Turn, bool) {
	var t memory.Turn
	asked := false
	for _, m := range msgs {
		if m.TurnID != turnID {
			continue
		}
		switch {
		case m.Role == openai.ChatMessageRoleUser && !m.Steer && !asked:
			t.UserMessage, asked = m.Content, true
		case m.Role == openai.ChatMessageRoleAssistant && m.Content != "" && len(m.ToolCalls) == 0:
			t.Answer, t.At = m.Content, m.CreatedAt
		}
	}
	return t, t.Answer != ""
}

// endSession tells the memory provider that a session ended (a summary's
// activity: reset, idle sweep, compaction, command), with the session's
// summary ("" when it has none). A failure is one warning line. A
// retried activity tells it again: the providers' calls are safe to
// repeat.
func (a *Activities) endSession(ctx context.Context, in turnapi.SummarizeSessionInput, owner, summary string) {
	if a.Memory == nil {
		return
	}
	ectx, cancel := context.WithTimeout(ctx, memoryCallTimeout)
	defer cancel()
	end := sessionEnd(in, summary, time.Now())
	end.User = owner
	if err := a.Memory.EndSession(ectx, end); err != nil {
		a.logger().Warn("memory: the memory provider was not told of the session's end", "provider", a.Memory.Name(),
			"session", in.SessionID, "error", err)
	}
}

// sessionEnd is what the provider is told of a session's end: the
// session, why it ended (a compaction when a summary is given and no
// reason), when (UTC) and its summary. Pure.
func sessionEnd(in turnapi.SummarizeSessionInput, summary string, at time.Time) memory.SessionEnd {
	reason := memory.EndReason(in.Reason)
	if reason == "" && in.Text != "" {
		reason = memory.EndCompaction
	}
	return memory.SessionEnd{SessionID: in.SessionID, Reason: reason, At: at.UTC(), Summary: summary}
}

// ownerOf is the owner of a session, as the memory provider's user: a
// gateway chat's key, "" for the operator's; ok is false for a session
// not stored (deleted meanwhile), which is nobody's. Each chat's memories
// are filed, and searched, apart.
func (a *Activities) ownerOf(ctx context.Context, sessionID string) (owner string, ok bool, err error) {
	sess, err := a.Store.Session(ctx, sessionID)
	if errors.Is(err, models.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return sess.Owner, true, nil
}
