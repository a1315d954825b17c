package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

const todoDescription = `Manage the task list for this session. Use it for work with three or more steps, or when the user gives several tasks: ` +
	`write the plan first, keep exactly one item in_progress while working on it, and mark items completed as soon as they are done (cancelled when no longer needed). ` +
	`Call with no arguments to read the current list. ` +
	`With "todos" and merge=false (the default) the given items replace the whole list. ` +
	`With merge=true, items whose id already exists are updated (only the fields given) and new ids are appended. ` +
	`Statuses: pending, in_progress, completed, cancelled. ` +
	`The result is JSON: {"todos":[{"id","content","status"}],"summary":{"total","pending","in_progress","completed","cancelled"}}.`

const todoSchema = `{"type":"object","properties":{` +
	`"todos":{"type":"array","description":"Items to write. Omit to read the current list.","items":{"type":"object","properties":{` +
	`"id":{"type":"string","description":"Unique identifier of the item, e.g. \"1\" or \"tests\"."},` +
	`"content":{"type":"string","description":"What needs to be done. Required for new items; with merge=true it may be omitted to keep the existing text."},` +
	`"status":{"type":"string","enum":["pending","in_progress","completed","cancelled"],"description":"Current state of the item. Default pending for new items."}` +
	`},"required":["id"],"additionalProperties":false}},` +
	`"merge":{"type":"boolean","description":"true: update items by id and append new ones; false (default): replace the whole list."}` +
	`},"required":[],"additionalProperties":false}`

// TodoTool is the todo tool. The zero value is ready to use; it persists
// through Env.Todos.
type TodoTool struct{}

type todoSummary struct {
	Total      int `json:"total"`
	Pending    int `json:"pending"`
	InProgress int `json:"in_progress"`
	Completed  int `json:"completed"`
	Cancelled  int `json:"cancelled"`
}

type todoResult struct {
	Todos   []TodoItem  `json:"todos"`
	Summary todoSummary `json:"summary"`
}

// todoUpdate is one parsed item of the "todos" argument; empty fields were
// not given.
type todoUpdate struct {
	ID, Content, Status string
}

// Name implements Tool.
func (TodoTool) Name() string { return "todo" }

// Idempotent implements Tool. Reading is harmless, but a call may write,
// so the tool as a whole reports false.
func (TodoTool) Idempotent() bool { return false }

// Definition implements Tool.
func (t TodoTool) Definition() openai.Tool {
	return functionTool(t.Name(), todoDescription, todoSchema)
}

// Run implements Tool.
func (t TodoTool) Run(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
	a, err := parseArgs(t.Name(), raw)
	if err != nil {
		return "", err
	}
	merge, _, err := a.boolean("merge")
	if err != nil {
		return "", err
	}
	updates, write, err := parseTodoUpdates(a, merge)
	if err != nil {
		return "", err
	}
	if env.Todos == nil {
		return "", fmt.Errorf("todo: %w", ErrNoTodoStore)
	}

	var items []TodoItem
	if !write || merge {
		if items, err = env.Todos.LoadTodos(ctx, env.SessionID); err != nil {
			return "", fmt.Errorf("todo: load list of session %q: %w", env.SessionID, err)
		}
	}
	if write {
		if merge {
			if items, err = mergeTodos(items, updates); err != nil {
				return "", err
			}
		} else {
			items = replaceTodos(updates)
		}
		if err := env.Todos.SaveTodos(ctx, env.SessionID, items); err != nil {
			return "", fmt.Errorf("todo: save list of session %q: %w", env.SessionID, err)
		}
	}
	return marshalResult(todoResultOf(items))
}

// parseTodoUpdates reads and validates the "todos" argument. write is false
// when the argument is absent. In replace mode every item needs an id and a
// content; in merge mode an item that updates an existing id may omit
// fields, which the merge checks.
func parseTodoUpdates(a args, merge bool) ([]todoUpdate, bool, error) {
	raw, ok := a.value("todos")
	if !ok {
		return nil, false, nil
	}
	if raw[0] != '[' {
		return nil, false, a.errorf(`"todos" must be an array of {id, content, status} objects, got %s`, jsonKind(raw))
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, false, a.errorf(`"todos": %v`, err)
	}
	updates := make([]todoUpdate, 0, len(elems))
	seen := make(map[string]int, len(elems))
	for i, elem := range elems {
		item, err := parseArgs(fmt.Sprintf("todo (todos[%d])", i), elem)
		if err != nil {
			return nil, false, err
		}
		if len(item.fields) == 0 {
			return nil, false, item.errorf("each item must be an object with id, content and status")
		}
		var u todoUpdate
		id, ok, err := item.idStr("id")
		if err != nil {
			return nil, false, err
		}
		if !ok {
			return nil, false, item.errorf(`missing required argument "id"`)
		}
		u.ID = id
		u.ID = strings.TrimSpace(u.ID)
		if u.ID == "" {
			return nil, false, item.errorf(`"id" must not be empty`)
		}
		if prev, dup := seen[u.ID]; dup {
			return nil, false, item.errorf("duplicate id %q (also todos[%d])", u.ID, prev)
		}
		seen[u.ID] = i
		if u.Content, _, err = item.str("content"); err != nil {
			return nil, false, err
		}
		u.Content = strings.TrimSpace(u.Content)
		if u.Content == "" && !merge {
			return nil, false, item.errorf(`"content" is required and must not be empty`)
		}
		status, _, err := item.str("status")
		if err != nil {
			return nil, false, err
		}
		if u.Status, err = normalizeStatus(status); err != nil {
			return nil, false, item.errorf("%v", err)
		}
		updates = append(updates, u)
	}
	return updates, true, nil
}

// normalizeStatus validates a status; it accepts case and separator
// variants such as "In-Progress". Empty stays empty (not given).
func normalizeStatus(s string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(s))
	n = strings.NewReplacer("-", "_", " ", "_").Replace(n)
	switch n {
	case "", TodoPending, TodoInProgress, TodoCompleted, TodoCancelled:
		return n, nil
	}
	return "", fmt.Errorf(`invalid status %q: must be one of pending, in_progress, completed, cancelled`, s)
}

func replaceTodos(updates []todoUpdate) []TodoItem {
	items := make([]TodoItem, 0, len(updates))
	for _, u := range updates {
		items = append(items, newTodo(u))
	}
	return items
}

// mergeTodos updates existing items by id (only the fields given) and
// appends new ones in the order given.
func mergeTodos(items []TodoItem, updates []todoUpdate) ([]TodoItem, error) {
	merged := append([]TodoItem(nil), items...)
	index := make(map[string]int, len(merged))
	for i, it := range merged {
		index[it.ID] = i
	}
	for _, u := range updates {
		i, ok := index[u.ID]
		if !ok {
			if u.Content == "" {
				return nil, fmt.Errorf(`%w for todo: new item %q needs a non-empty "content"`, ErrInvalidArguments, u.ID)
			}
			index[u.ID] = len(merged)
			merged = append(merged, newTodo(u))
			continue
		}
		if u.Content != "" {
			merged[i].Content = u.Content
		}
		if u.Status != "" {
			merged[i].Status = u.Status
		}
	}
	return merged, nil
}

func newTodo(u todoUpdate) TodoItem {
	status := u.Status
	if status == "" {
		status = TodoPending
	}
	return TodoItem{ID: u.ID, Content: u.Content, Status: status}
}

func todoResultOf(items []TodoItem) todoResult {
	res := todoResult{Todos: items}
	if res.Todos == nil {
		res.Todos = []TodoItem{}
	}
	for _, it := range items {
		res.Summary.Total++
		switch it.Status {
		case TodoPending:
			res.Summary.Pending++
		case TodoInProgress:
			res.Summary.InProgress++
		case TodoCompleted:
			res.Summary.Completed++
		case TodoCancelled:
			res.Summary.Cancelled++
		}
	}
	return res
}

// todo is a built-in tool.
var _ = builtin(func(Services) Tool { return TodoTool{} })

// Meta implements Described.
func (TodoTool) Meta() Meta {
	return Meta{
		Toolset:      "planning",
		Guidance:     "For work with three or more steps, write the plan with todo first and keep it current as you go.",
		GuidanceRank: 10,
	}
}
