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
