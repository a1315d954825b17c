package activities

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/models"
)

// todoStore adapts the store's JSON todo persistence to tools.TodoStore.
type todoStore struct{ s *models.Store }

func (t todoStore) LoadTodos(ctx context.Context, sessionID string) ([]tools.TodoItem, error) {
	data, err := t.s.LoadTodosJSON(ctx, sessionID)
	if err != nil || len(data) == 0 {
		return nil, err
	}
	var items []tools.TodoItem
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, fmt.Errorf("decode todo list of %s: %w", sessionID, err)
	}
	return items, nil
}

func (t todoStore) SaveTodos(ctx context.Context, sessionID string, items []tools.TodoItem) error {
	data, err := json.Marshal(items)
	if err != nil {
		return fmt.Errorf("encode todo list: %w", err)
	}
	return t.s.SaveTodosJSON(ctx, sessionID, data)
}
