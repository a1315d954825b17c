package activities

import (
	"context"
	"encoding/json"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/tools"
)

// ExecuteTools runs the tool calls of one assistant message (one directly,
// several concurrently) and persists one result per call id, in call order.
func (a *Activities) ExecuteTools(ctx context.Context, in ExecuteToolsInput) (ExecuteToolsResult, error) {
	msg, err := a.Store.Message(ctx, in.AssistantMessageID)
	if err != nil {
		return ExecuteToolsResult{}, fmt.Errorf("execute tools: load message %d: %w", in.AssistantMessageID, err)
	}
	calls := make([]tools.Call, 0, len(msg.ToolCalls))
	for _, tc := range msg.ToolCalls {
		calls = append(calls, tools.Call{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	env := tools.Env{
		Workdir:        in.Workdir,
		SessionID:      in.SessionID,
		TurnID:         in.TurnID,
		Todos:          todoStore{a.Store},
		MaxOutputChars: a.MaxToolOutput,
	}
	stop := a.heartbeat(ctx, func() any { return in.Call })
	results := a.Tools.RunBatch(ctx, env, calls)
	stop()

	rows := make([]models.Message, 0, len(results))
	var out ExecuteToolsResult
	for _, r := range results {
		if r.IsError {
			out.Failed++
		}
		rows = append(rows, models.Message{
			SessionID:  in.SessionID,
			TurnID:     in.TurnID,
			IdemKey:    toolKey(in.TurnID, in.Call, r.CallID),
			Role:       openai.ChatMessageRoleTool,
			Content:    r.Content,
			ToolCallID: r.CallID,
			Name:       r.Name,
		})
	}
	stored, err := a.Store.AppendMessages(ctx, rows)
	if err != nil {
		return ExecuteToolsResult{}, fmt.Errorf("execute tools: persist results: %w", err)
	}
	for _, m := range stored {
		out.ResultMessageIDs = append(out.ResultMessageIDs, m.ID)
	}
	return out, nil
}

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
