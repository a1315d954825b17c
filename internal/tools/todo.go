package tools

import (
	"context"
	"fmt"
	"strings"
)

// todoArgs are todo's arguments.
type todoArgs struct {
	Todos *[]todoUpdate `json:"todos,omitempty" jsonschema:"Items to write. Omit to read the current list."`
	Merge bool          `json:"merge,omitempty" jsonschema:"true: update items by id and append new ones; false (default): replace the whole list."`
}

// Todo is the todo tool; it persists through Env.Todos. Reading is
// harmless, but a call may write, so the tool is not idempotent.
var Todo = Define(Spec[todoArgs]{
	Name: "todo",
	Description: `Manage the task list for this session. Use it for work with three or more steps, or when the user gives several tasks: ` +
		`write the plan first, keep exactly one item in_progress while working on it, and mark items completed as soon as they are done (cancelled when no longer needed). ` +
		`Call with no arguments to read the current list. ` +
		`With "todos" and merge=false (the default) the given items replace the whole list. ` +
		`With merge=true, items whose id already exists are updated (only the fields given) and new ids are appended. ` +
		`Statuses: pending, in_progress, completed, cancelled. ` +
		`The result is JSON: {"todos":[{"id","content","status"}],"summary":{"total","pending","in_progress","completed","cancelled"}}.`,
	Meta: Meta{
		Toolset:      "planning",
		Guidance:     "For work with three or more steps, write the plan with todo first and keep it current as you go.",
		GuidanceRank: 10,
	},
	Quick: true, // the list lives in the store
	Run:   runTodo,
})

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

// todoUpdate is one item of the "todos" argument; empty fields were not
// given.
type todoUpdate struct {
	ID      idString `json:"id,omitempty" jsonschema:"Unique identifier of the item, e.g. \"1\" or \"tests\"."`
	Content string   `json:"content,omitempty" jsonschema:"What needs to be done. Required for new items; with merge=true it may be omitted to keep the existing text."`
	Status  string   `json:"status,omitempty" jsonschema:"pending, in_progress, completed or cancelled. Default pending for new items."`
}

// runTodo reads the list, or writes it and reads it back.
func runTodo(ctx context.Context, env Env, a todoArgs) (string, error) {
	merge, write := a.Merge, a.Todos != nil
	var updates []todoUpdate
	var err error
	if write {
		if updates, err = checkTodoUpdates(*a.Todos, merge); err != nil {
			return "", err
		}
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

// checkTodoUpdates checks the "todos" argument. In replace mode every item
// needs an id and a content; in merge mode an item that updates an
// existing id may omit fields, which the merge checks.
func checkTodoUpdates(updates []todoUpdate, merge bool) ([]todoUpdate, error) {
	seen := make(map[idString]int, len(updates))
	for i := range updates {
		u := &updates[i]
		errorf := func(format string, v ...any) error {
			return invalidArgs(fmt.Sprintf("todo (todos[%d])", i), format, v...)
		}
		if *u == (todoUpdate{}) {
			return nil, errorf("each item must be an object with id, content and status")
		}
		if u.ID = idString(strings.TrimSpace(string(u.ID))); u.ID == "" {
			return nil, errorf(`"id" is required and must not be empty`)
		}
		if prev, dup := seen[u.ID]; dup {
			return nil, errorf("duplicate id %q (also todos[%d])", u.ID, prev)
		}
		seen[u.ID] = i
		if u.Content = strings.TrimSpace(u.Content); u.Content == "" && !merge {
			return nil, errorf(`"content" is required and must not be empty`)
		}
		var err error
		if u.Status, err = normalizeStatus(u.Status); err != nil {
			return nil, errorf("%v", err)
		}
	}
	return updates, nil
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
		i, ok := index[string(u.ID)]
		if !ok {
			if u.Content == "" {
				return nil, fmt.Errorf(`%w for todo: new item %q needs a non-empty "content"`, ErrInvalidArguments, u.ID)
			}
			index[string(u.ID)] = len(merged)
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
	return TodoItem{ID: string(u.ID), Content: u.Content, Status: status}
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
var _ = builtin(func(Services) Tool { return Todo })
