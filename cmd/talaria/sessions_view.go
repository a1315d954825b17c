package main

import (
	"time"

	"github.com/talaria-agent/talaria/models"
)

// sessionView is a session as `sessions list --json` prints it: snake_case
// keys and, instead of the system prompt itself, whether there is one and
// its length.
type sessionView struct {
	ID                 string    `json:"id"`
	ParentSessionID    string    `json:"parent_session_id,omitempty"`
	LineageID          string    `json:"lineage_id"`
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

// newSessionViews describes sessions; first returns a session's first
// message ("" when it has none).
func newSessionViews(sessions []models.Session, first func(id string) string) []sessionView {
	out := make([]sessionView, len(sessions))
	for i, s := range sessions {
		out[i] = sessionView{ID: s.ID, ParentSessionID: s.ParentSessionID, LineageID: s.LineageID, Generation: s.Generation,
			Model: s.Model, Title: s.Title, TurnCount: s.TurnCount, HasSystemPrompt: s.SystemPrompt != "",
			SystemPromptLength: len(s.SystemPrompt), FirstMessage: first(s.ID),
			CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC()}
	}
	return out
}

// sessionDetailView is `sessions show -o json`: the session (with its
// system prompt), its lineage, its turns and its conversation.
type sessionDetailView struct {
	Session      sessionView   `json:"session"`
	SystemPrompt string        `json:"system_prompt,omitempty"`
	Lineage      []sessionView `json:"lineage"`
	Turns        []turnView    `json:"turns"`
	Messages     []messageView `json:"messages"`
}

// turnView is one turn of a session.
type turnView struct {
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

// messageView is one message of a conversation.
type messageView struct {
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
	CreatedAt        time.Time         `json:"created_at"`
}

// searchGroupView is one conversation of `sessions search -o json`.
type searchGroupView struct {
	LineageID  string          `json:"lineage_id"`
	SessionID  string          `json:"session_id"`
	SessionIDs []string        `json:"session_ids"`
	Hits       []searchHitView `json:"hits"`
}

// searchHitView is a matching message between its neighbours.
type searchHitView struct {
	Message messageView   `json:"message"`
	Before  []messageView `json:"before"`
	After   []messageView `json:"after"`
}

func newSessionDetailView(sess *models.Session, lineage []models.Session, turns []models.Turn, msgs []models.Message,
	first func(id string) string) sessionDetailView {
	v := sessionDetailView{Session: newSessionViews([]models.Session{*sess}, first)[0], SystemPrompt: sess.SystemPrompt,
		Lineage: newSessionViews(lineage, func(string) string { return "" }), Messages: newMessageViews(msgs),
		Turns: make([]turnView, len(turns))}
	for i, t := range turns {
		v.Turns[i] = turnView{ID: t.ID, Number: t.Number, Model: t.Model, Status: t.Status, ExitReason: t.ExitReason,
			Error: t.Error, FinalResponse: t.FinalResponse, APICalls: t.APICalls, PromptTokens: t.PromptTokens,
			CompletionTokens: t.CompletionTokens, TotalTokens: t.TotalTokens, StartedAt: t.StartedAt.UTC(), EndedAt: utcPtr(t.EndedAt)}
	}
	return v
}

func newMessageViews(msgs []models.Message) []messageView {
	out := make([]messageView, len(msgs))
	for i, m := range msgs {
		out[i] = messageView{ID: m.ID, SessionID: m.SessionID, TurnID: m.TurnID, Role: m.Role, Content: m.Content,
			Reasoning: m.Reasoning, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name,
			FinishReason: m.FinishReason, PromptTokens: m.PromptTokens, CompletionTokens: m.CompletionTokens,
			Steer: m.Steer, CreatedAt: m.CreatedAt.UTC()}
	}
	return out
}

func newSearchViews(groups []models.SearchGroup) []searchGroupView {
	out := make([]searchGroupView, len(groups))
	for i, g := range groups {
		v := searchGroupView{LineageID: g.LineageID, SessionID: g.SessionID, SessionIDs: nonNil(g.SessionIDs),
			Hits: make([]searchHitView, len(g.Hits))}
		for j, h := range g.Hits {
			v.Hits[j] = searchHitView{Message: newMessageViews([]models.Message{h.Message})[0],
				Before: newMessageViews(h.Before), After: newMessageViews(h.After)}
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
