package acpdoor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/models"
)

// compactedNote is the thought a load shows where the conversation was
// compacted: the model reads a summary of what is above it from there on.
const compactedNote = "(the conversation was compacted here: from now on the model reads a summary of the messages above)"

// replay is what a load shows of session id: the messages of every
// session of its conversation (the sessions compaction made of it, by
// their links), oldest first, marked by a note at each compaction; a
// session's copies of its parent's messages are left out when that parent
// was shown just before it (they were shown there); the running turn's
// messages are left to its events.
func replay(ctx context.Context, st *models.Store, id, running string) ([]acp.SessionUpdate, error) {
	chain, err := st.Chain(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("read the sessions of %s: %w", id, err)
	}
	var out []acp.SessionUpdate
	for i, s := range chain {
		msgs, err := st.Messages(ctx, s.ID)
		if err != nil {
			return nil, fmt.Errorf("read session %s: %w", s.ID, err)
		}
		if i > 0 {
			if prev := chain[i-1]; s.ParentSessionID == prev.ID && s.Generation == prev.Generation+1 {
				// Else a session between them was deleted: the copies are
				// all that is left of it.
				msgs = withoutCopies(msgs, s.ID)
			}
			out = append(out, acp.UpdateAgentThoughtText(compactedNote))
		}
		out = append(out, historyUpdates(msgs, running)...)
	}
	return out, nil
}

// withoutCopies drops the messages compaction copied into session id from
// its parent (their idempotency keys say so: models.CompactSession). Pure.
func withoutCopies(msgs []models.Message, id string) []models.Message {
	prefix := id + "/copy/"
	out := make([]models.Message, 0, len(msgs))
	for _, m := range msgs {
		if !strings.HasPrefix(m.IdemKey, prefix) {
			out = append(out, m)
		}
	}
	return out
}

// historyUpdates replays stored messages as the updates that showed them,
// leaving out those of the running turn (its events follow). Pure.
func historyUpdates(msgs []models.Message, running string) []acp.SessionUpdate {
	var out []acp.SessionUpdate
	for _, m := range msgs {
		if running != "" && m.TurnID == running && m.Role != "user" {
			continue // its events follow; no event carries the user's text
		}
		switch m.Role {
		case "user":
			out = append(out, acp.UpdateUserMessageText(m.Content))
		case "assistant":
			if m.Content != "" {
				out = append(out, acp.UpdateAgentMessageText(m.Content))
			}
			for _, tc := range m.ToolCalls {
				out = append(out, toolStart(activities.ToolEvent{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments}))
			}
		case "tool":
			out = append(out, acp.UpdateToolCall(acp.ToolCallId(m.ToolCallID), acp.WithUpdateStatus(acp.ToolCallStatusCompleted)))
		}
	}
	return out
}

// plan is the session's todo list as the editor's plan; false when the
// session has none. The list belongs to the newest session of the lineage
// (compaction hands it on).
func plan(ctx context.Context, st *models.Store, id string) (acp.SessionUpdate, bool, error) {
	tip, err := st.Tip(ctx, id)
	if err != nil {
		return acp.SessionUpdate{}, false, fmt.Errorf("find the newest part of session %s: %w", id, err)
	}
	data, err := st.LoadTodosJSON(ctx, tip)
	if err != nil || data == nil {
		return acp.SessionUpdate{}, false, err
	}
	var items []tools.TodoItem
	if err := json.Unmarshal(data, &items); err != nil {
		return acp.SessionUpdate{}, false, fmt.Errorf("read the todo list of session %s: %w", tip, err)
	}
	return planUpdate(items), true, nil
}

// planUpdate is a todo list as an ACP plan: the whole list, which replaces
// the editor's. ACP has no cancelled status: a cancelled item is left out.
// Pure.
func planUpdate(items []tools.TodoItem) acp.SessionUpdate {
	entries := []acp.PlanEntry{}
	for _, it := range items {
		var st acp.PlanEntryStatus
		switch it.Status {
		case "pending":
			st = acp.PlanEntryStatusPending
		case "in_progress":
			st = acp.PlanEntryStatusInProgress
		case "completed":
			st = acp.PlanEntryStatusCompleted
		default:
			continue
		}
		entries = append(entries, acp.PlanEntry{Content: it.Content, Status: st, Priority: acp.PlanEntryPriorityMedium})
	}
	return acp.UpdatePlan(entries...)
}

// planChanged: ev is the end of a todo call that ran, after which the
// list may differ. Pure.
func planChanged(ev models.Event) bool {
	if ev.Kind != events.KindToolEnd {
		return false
	}
	var te activities.ToolEvent
	return json.Unmarshal([]byte(ev.Data), &te) == nil && te.Name == tools.Todo.Name() && !te.Failed
}
