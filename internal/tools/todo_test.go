package tools

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// memTodoStore is an in-memory TodoStore keyed by session.
type memTodoStore struct {
	mu      sync.Mutex
	lists   map[string][]TodoItem
	saves   int
	loadErr error
	saveErr error
}

func newMemTodoStore() *memTodoStore { return &memTodoStore{lists: map[string][]TodoItem{}} }

func (s *memTodoStore) LoadTodos(_ context.Context, sessionID string) ([]TodoItem, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loadErr != nil {
		return nil, s.loadErr
	}
	return append([]TodoItem(nil), s.lists[sessionID]...), nil
}

func (s *memTodoStore) SaveTodos(_ context.Context, sessionID string, items []TodoItem) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.saveErr != nil {
		return s.saveErr
	}
	s.saves++
	s.lists[sessionID] = append([]TodoItem(nil), items...)
	return nil
}

func TestTodo(t *testing.T) {
	initial := []TodoItem{
		{ID: "1", Content: "design", Status: TodoCompleted},
		{ID: "2", Content: "build", Status: TodoInProgress},
		{ID: "3", Content: "test", Status: TodoPending},
	}
	tests := []struct {
		name      string
		initial   []TodoItem
		args      string
		want      string // exact JSON result
		wantSaved bool
		wantErr   error
		errHas    string
	}{
		{name: "read empty list", args: `{}`,
			want: `{"todos":[],"summary":{"total":0,"pending":0,"in_progress":0,"completed":0,"cancelled":0}}`},
		{name: "read with empty arguments", initial: initial, args: ``,
			want: `{"todos":[{"id":"1","content":"design","status":"completed"},{"id":"2","content":"build","status":"in_progress"},{"id":"3","content":"test","status":"pending"}],"summary":{"total":3,"pending":1,"in_progress":1,"completed":1,"cancelled":0}}`},
		{name: "replace", initial: initial, wantSaved: true,
			args: `{"todos":[{"id":"a","content":"only task","status":"in_progress"}]}`,
			want: `{"todos":[{"id":"a","content":"only task","status":"in_progress"}],"summary":{"total":1,"pending":0,"in_progress":1,"completed":0,"cancelled":0}}`},
		{name: "replace with empty list clears", initial: initial, wantSaved: true, args: `{"todos":[],"merge":false}`,
			want: `{"todos":[],"summary":{"total":0,"pending":0,"in_progress":0,"completed":0,"cancelled":0}}`},
		{name: "replace defaults status to pending and trims", wantSaved: true,
			args: `{"todos":[{"id":" x ","content":"  write docs  "}]}`,
			want: `{"todos":[{"id":"x","content":"write docs","status":"pending"}],"summary":{"total":1,"pending":1,"in_progress":0,"completed":0,"cancelled":0}}`},
		{name: "status variants normalised, numeric id accepted", wantSaved: true,
			args: `{"todos":[{"id":7,"content":"c","status":"In-Progress"}]}`,
			want: `{"todos":[{"id":"7","content":"c","status":"in_progress"}],"summary":{"total":1,"pending":0,"in_progress":1,"completed":0,"cancelled":0}}`},
		{name: "merge updates by id and appends", initial: initial, wantSaved: true,
			args: `{"merge":true,"todos":[{"id":"2","status":"completed"},{"id":"3","content":"test everything"},{"id":"4","content":"ship","status":"pending"}]}`,
			want: `{"todos":[{"id":"1","content":"design","status":"completed"},{"id":"2","content":"build","status":"completed"},{"id":"3","content":"test everything","status":"pending"},{"id":"4","content":"ship","status":"pending"}],"summary":{"total":4,"pending":2,"in_progress":0,"completed":2,"cancelled":0}}`},
		{name: "merge as string true", initial: initial, wantSaved: true,
			args: `{"merge":"true","todos":[{"id":"1","status":"cancelled"}]}`,
			want: `{"todos":[{"id":"1","content":"design","status":"cancelled"},{"id":"2","content":"build","status":"in_progress"},{"id":"3","content":"test","status":"pending"}],"summary":{"total":3,"pending":1,"in_progress":1,"completed":0,"cancelled":1}}`},
		{name: "merge without todos reads", initial: initial, args: `{"merge":true}`,
			want: `{"todos":[{"id":"1","content":"design","status":"completed"},{"id":"2","content":"build","status":"in_progress"},{"id":"3","content":"test","status":"pending"}],"summary":{"total":3,"pending":1,"in_progress":1,"completed":1,"cancelled":0}}`},
		{name: "null todos reads", initial: initial[:1], args: `{"todos":null}`,
			want: `{"todos":[{"id":"1","content":"design","status":"completed"}],"summary":{"total":1,"pending":0,"in_progress":0,"completed":1,"cancelled":0}}`},

		{name: "invalid status", args: `{"todos":[{"id":"1","content":"x","status":"done"}]}`, wantErr: ErrInvalidArguments, errHas: "invalid status"},
		{name: "missing id", args: `{"todos":[{"content":"x","status":"pending"}]}`, wantErr: ErrInvalidArguments, errHas: "todos[0]"},
		{name: "empty id", args: `{"todos":[{"id":"","content":"x"}]}`, wantErr: ErrInvalidArguments, errHas: `"id"`},
		{name: "missing content on replace", args: `{"todos":[{"id":"1","status":"pending"}]}`, wantErr: ErrInvalidArguments, errHas: `"content"`},
		{name: "missing content for new item on merge", initial: initial, args: `{"merge":true,"todos":[{"id":"9","status":"pending"}]}`, wantErr: ErrInvalidArguments, errHas: `"9"`},
		{name: "duplicate ids", args: `{"todos":[{"id":"1","content":"a"},{"id":"1","content":"b"}]}`, wantErr: ErrInvalidArguments, errHas: "duplicate id"},
		{name: "todos not an array", args: `{"todos":"buy milk"}`, wantErr: ErrInvalidArguments, errHas: "must be an array"},
		{name: "item not an object", args: `{"todos":["buy milk"]}`, wantErr: ErrInvalidArguments, errHas: "todos[0]"},
		{name: "empty item", args: `{"todos":[{}]}`, wantErr: ErrInvalidArguments, errHas: "todos[0]"},
		{name: "status wrong type", args: `{"todos":[{"id":"1","content":"a","status":1.5}]}`, wantErr: ErrInvalidArguments},
		{name: "merge wrong type", args: `{"merge":"maybe"}`, wantErr: ErrInvalidArguments, errHas: `"merge"`},
		{name: "malformed JSON", args: `{"todos":[`, wantErr: ErrInvalidArguments},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := newMemTodoStore()
			store.lists["s1"] = append([]TodoItem(nil), tc.initial...)
			env := Env{SessionID: "s1", Todos: store}
			out, err := runTool(t, Todo, env, tc.args)
			if expectError(t, out, err, tc.wantErr, tc.errHas) {
				if store.saves != 0 {
					t.Error("a failed call saved the list")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out != tc.want {
				t.Errorf("got  %s\nwant %s", out, tc.want)
			}
			if saved := store.saves > 0; saved != tc.wantSaved {
				t.Errorf("saved=%v, want %v", saved, tc.wantSaved)
			}
			// What was saved is what a later read returns.
			again, err := runTool(t, Todo, env, `{}`)
			if err != nil {
				t.Fatal(err)
			}
			if again != tc.want {
				t.Errorf("re-read %s\nwant    %s", again, tc.want)
			}
		})
	}
}

func TestTodoSessionsAreSeparate(t *testing.T) {
	store := newMemTodoStore()
	if _, err := runTool(t, Todo, Env{SessionID: "a", Todos: store}, `{"todos":[{"id":"1","content":"for a"}]}`); err != nil {
		t.Fatal(err)
	}
	out, err := runTool(t, Todo, Env{SessionID: "b", Todos: store}, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if r := decode[todoResult](t, out); len(r.Todos) != 0 {
		t.Errorf("session b sees %v", r.Todos)
	}
}

func TestTodoStoreErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	tests := []struct {
		name    string
		env     Env
		args    string
		wantErr error
	}{
		{name: "no store", env: Env{SessionID: "s"}, args: `{}`, wantErr: ErrNoTodoStore},
		{name: "no store on write", env: Env{SessionID: "s"}, args: `{"todos":[]}`, wantErr: ErrNoTodoStore},
		{name: "load fails", env: Env{SessionID: "s", Todos: &memTodoStore{loadErr: boom}}, args: `{}`, wantErr: boom},
		{name: "save fails", env: Env{SessionID: "s", Todos: &memTodoStore{lists: map[string][]TodoItem{}, saveErr: boom}}, args: `{"todos":[]}`, wantErr: boom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runTool(t, Todo, tc.env, tc.args)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
		})
	}
}
