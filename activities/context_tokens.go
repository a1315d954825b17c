package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/talaria-agent/talaria/internal/compress"
	"github.com/talaria-agent/talaria/models"
)

// schemaChars returns the JSON length of the tool schemas a call offers
// (the registry's, limited to allow); they count towards the prompt.
func (a *Activities) schemaChars(allow []string) func() int {
	return func() int {
		if a.Tools == nil {
			return 0
		}
		return a.Tools.DefinitionChars(allow)
	}
}

// contextTokens is the size of the context the next model call would
// send: the prompt tokens the provider reported for the latest reply plus
// its completion and an estimate of everything after it; without a report,
// the estimate (chars+3)/4 of the system prompt, every message and the tool
// schemas (schemaChars is called only then).
func contextTokens(system string, history []models.Message, schemaChars func() int) int {
	for i := len(history) - 1; i >= 0; i-- {
		m := history[i]
		if m.Role == "assistant" && m.PromptTokens > 0 {
			return int(m.PromptTokens+m.CompletionTokens) + compress.EstimateTokens(history[i+1:], 0)
		}
	}
	return compress.EstimateTokens(append([]models.Message{{Role: "system", Content: system}}, history...), schemaChars())
}

// loadContext returns a session's system prompt (the stored one, else the
// worker's fallback) and its visible messages.
func (a *Activities) loadContext(ctx context.Context, sessionID string) (string, []models.Message, error) {
	return a.loadContextWith(ctx, sessionID, a.Store.Messages)
}

// loadCallContext is loadContext for a model call: the messages as the
// call reads them (models.Store.Conversation: no keys, no times).
func (a *Activities) loadCallContext(ctx context.Context, sessionID string) (string, []models.Message, error) {
	return a.loadContextWith(ctx, sessionID, a.Store.Conversation)
}

// loadContextWith is loadContext with messages read by read.
func (a *Activities) loadContextWith(ctx context.Context, sessionID string,
	read func(context.Context, string) ([]models.Message, error)) (string, []models.Message, error) {
	prompt, err := a.Store.SessionSystemPrompt(ctx, sessionID)
	if errors.Is(err, models.ErrNotFound) {
		return "", nil, fmt.Errorf("%w: %s (it was deleted, or the store was replaced, while the turn ran)", ErrSessionMissing, sessionID)
	}
	if err != nil {
		return "", nil, fmt.Errorf("load session %s: %w", sessionID, err)
	}
	history, err := read(ctx, sessionID)
	if err != nil {
		return "", nil, fmt.Errorf("load session %s: %w", sessionID, err)
	}
	return cmp.Or(prompt, a.SystemPrompt), history, nil
}
