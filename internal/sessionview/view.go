// Package sessionview is the JSON shape of sessions, their turns and
// messages, and of search hits, shared by the CLI (`talaria sessions ...
// -o json`) and the HTTP API (/api/sessions), so both say the same thing
// the same way.
package sessionview

import (
	"context"
	"time"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// Session is a session: snake_case keys and, instead of the system
// prompt itself, whether there is one and its length.
type Session struct {
	ID              string `json:"id"`
	ParentSessionID string `json:"parent_session_id,omitempty"`
	DelegatedFrom   string `json:"delegated_from,omitempty"`
	LineageID       string `json:"lineage_id"`
	// Owner is the gateway chat the session belongs to (its key; absent
	// for the operator's sessions): what its recall and searches see.
	Owner              string    `json:"owner,omitempty"`
	Generation         int       `json:"generation"`
	Model              string    `json:"model"`
	Title              string    `json:"title,omitempty"`
	TurnCount          int       `json:"turn_count"`
	HasSystemPrompt    bool      `json:"has_system_prompt"`
	SystemPromptLength int       `json:"system_prompt_length"`
	FirstMessage       string    `json:"first_message,omitempty"`
	CreatedAt          time.Time `json:"created_at"`
	UpdatedAt          time.Time `json:"updated_at"`
}

// FirstMessage is a func giving a session's first visible message from st
// ("" when it has none, or it cannot be read).
func FirstMessage(ctx context.Context, st *models.Store) func(id string) string {
	return func(id string) string {
		if m, err := st.FirstMessage(ctx, id); err == nil {
			return m.Content
		}
		return ""
	}
}

// NewSessions describes sessions; first returns a session's first
// message ("" when it has none).
func NewSessions(sessions []models.Session, first func(id string) string) []Session {
	out := make([]Session, len(sessions))
	for i, s := range sessions {
		out[i] = Session{ID: s.ID, ParentSessionID: s.ParentSessionID, DelegatedFrom: s.DelegatedFrom, LineageID: s.LineageID, Owner: s.Owner,
			Generation: s.Generation, Model: s.Model, Title: s.Title, TurnCount: s.TurnCount, HasSystemPrompt: s.SystemPrompt != "",
			SystemPromptLength: len(s.SystemPrompt), FirstMessage: first(s.ID),
			CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC()}
	}
	return out
}

// Detail is `sessions show -o json`: the session (with its system
// prompt), its lineage, its turns and its conversation.
type Detail struct {
	Session      Session   `json:"session"`
	SystemPrompt string    `json:"system_prompt,omitempty"`
	Lineage      []Session `json:"lineage"`
	// Tasks are the sessions its delegate_task calls made.
	Tasks    []Session `json:"tasks,omitempty"`
	Turns    []Turn    `json:"turns"`
	Messages []Message `json:"messages"`
}

// Turn is one turn of a session.
type Turn struct {
	ID               string     `json:"id"`
	Number           int        `json:"number"`
	Model            string     `json:"model"`
	Status           string     `json:"status"`
	ExitReason       string     `json:"exit_reason,omitempty"`
	Error            string     `json:"error,omitempty"`
	FinalResponse    string     `json:"final_response,omitempty"`
	APICalls         int        `json:"api_calls"`
	PromptTokens     int64      `json:"prompt_tokens"`
	CompletionTokens int64      `json:"completion_tokens"`
	TotalTokens      int64      `json:"total_tokens"`
	StartedAt        time.Time  `json:"started_at"`
	EndedAt          *time.Time `json:"ended_at,omitempty"`
}

// Message is one message of a conversation, in OpenAI's terms where it
// has them (role, content, tool_calls, tool_call_id, name).
type Message struct {
	ID               int64             `json:"id"`
	SessionID        string            `json:"session_id"`
	TurnID           string            `json:"turn_id,omitempty"`
	Role             string            `json:"role"`
	Content          string            `json:"content"`
	Reasoning        string            `json:"reasoning,omitempty"`
	ToolCalls        []models.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string            `json:"tool_call_id,omitempty"`
	Name             string            `json:"name,omitempty"`
	FinishReason     string            `json:"finish_reason,omitempty"`
	PromptTokens     int64             `json:"prompt_tokens,omitempty"`
	CompletionTokens int64             `json:"completion_tokens,omitempty"`
	Steer            bool              `json:"steer,omitempty"`
	// Images are the pictures sent with a user message (by stored id or
	// remote address, with where each was saved; never their bytes).
	Images []turnapi.Image `json:"images,omitempty"`
	// Outcome is how the call a tool result answers ended (ToolOutcome:
	// done, failed, stopped, not_run); only on tool results.
	Outcome   string    `json:"outcome,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// SearchGroup is one conversation of a search's hits.
type SearchGroup struct {
	LineageID  string      `json:"lineage_id"`
	SessionID  string      `json:"session_id"`
	SessionIDs []string    `json:"session_ids"`
	Hits       []SearchHit `json:"hits"`
}

// SearchHit is a matching message between its neighbours.
type SearchHit struct {
	Message Message   `json:"message"`
	Before  []Message `json:"before"`
	After   []Message `json:"after"`
}

// NewDetail describes a session, its lineage, turns and messages; the
// session counts its turns (TurnCount).
func NewDetail(sess *models.Session, lineage []models.Session, turns []models.Turn, msgs []models.Message,
	first func(id string) string) Detail {
	counted := *sess
	counted.TurnCount = TurnCount(*sess, turns)
	v := Detail{Session: NewSessions([]models.Session{counted}, first)[0], SystemPrompt: sess.SystemPrompt,
		Lineage: NewSessions(lineage, func(string) string { return "" }), Messages: NewMessages(msgs),
		Turns: make([]Turn, len(turns))}
	for i, t := range turns {
		v.Turns[i] = Turn{ID: t.ID, Number: t.Number, Model: t.Model, Status: t.Status, ExitReason: t.ExitReason,
			Error: t.Error, FinalResponse: t.FinalResponse, APICalls: t.APICalls, PromptTokens: t.PromptTokens,
			CompletionTokens: t.CompletionTokens, TotalTokens: t.TotalTokens, StartedAt: t.StartedAt.UTC(), EndedAt: utcPtr(t.EndedAt)}
	}
	return v
}

// NewMessages describes messages.
func NewMessages(msgs []models.Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = Message{ID: m.ID, SessionID: m.SessionID, TurnID: m.TurnID, Role: m.Role, Content: m.Content,
			Reasoning: m.Reasoning, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name,
			FinishReason: m.FinishReason, PromptTokens: m.PromptTokens, CompletionTokens: m.CompletionTokens,
			Steer: m.Steer, Images: m.Images, CreatedAt: m.CreatedAt.UTC()}
		if m.Role == "tool" {
			out[i].Outcome = ToolOutcome(m.Content)
		}
	}
	return out
}

// NewSearch describes search results.
func NewSearch(groups []models.SearchGroup) []SearchGroup {
	out := make([]SearchGroup, len(groups))
	for i, g := range groups {
		ids := g.SessionIDs
		if ids == nil {
			ids = []string{}
		}
		v := SearchGroup{LineageID: g.LineageID, SessionID: g.SessionID, SessionIDs: ids, Hits: make([]SearchHit, len(g.Hits))}
		for j, h := range g.Hits {
			v.Hits[j] = SearchHit{Message: NewMessages([]models.Message{h.Message})[0],
				Before: NewMessages(h.Before), After: NewMessages(h.After)}
		}
		out[i] = v
	}
	return out
}

// utcPtr is t in UTC, nil for nil.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
