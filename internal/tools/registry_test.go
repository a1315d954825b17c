package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// fakeTool is a configurable tool for registry tests.
type fakeTool struct {
	name string
	run  func(ctx context.Context, env Env, args json.RawMessage) (string, error)
}

func (f fakeTool) Name() string     { return f.name }
func (f fakeTool) Idempotent() bool { return true }
func (f fakeTool) Definition() openai.Tool {
	return functionTool(f.name, "test tool", `{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`)
}
func (f fakeTool) Run(ctx context.Context, env Env, args json.RawMessage) (string, error) {
	return f.run(ctx, env, args)
}

func echoTool() fakeTool {
	return fakeTool{name: "echo", run: func(_ context.Context, env Env, args json.RawMessage) (string, error) {
		return env.SessionID + ":" + string(args), nil
	}}
}

func TestNewRegistry(t *testing.T) {
	tests := []struct {
		name    string
		tools   []Tool
		wantErr error
		errHas  string
		names   []string
	}{
		{name: "empty", names: nil},
		{name: "sorted names", tools: []Tool{fakeTool{name: "b"}, fakeTool{name: "a"}, fakeTool{name: "c"}}, names: []string{"a", "b", "c"}},
		{name: "duplicate", tools: []Tool{fakeTool{name: "a"}, fakeTool{name: "a"}}, wantErr: ErrDuplicateTool, errHas: `"a"`},
		{name: "nil tool", tools: []Tool{nil}, errHas: "nil"},
		{name: "empty name", tools: []Tool{fakeTool{}}, errHas: "empty name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewRegistry(tc.tools...)
			if tc.errHas != "" {
				if err == nil {
					t.Fatal("expected an error")
				}
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Errorf("error %q is not %v", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.errHas) {
					t.Errorf("error %q does not mention %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Names(); !slices.Equal(got, tc.names) {
				t.Errorf("names %v, want %v", got, tc.names)
			}
			for _, n := range tc.names {
				if tool, ok := r.Lookup(n); !ok || tool.Name() != n {
					t.Errorf("lookup %q failed", n)
				}
			}
			if _, ok := r.Lookup("missing"); ok {
				t.Error("lookup of a missing tool succeeded")
			}
		})
	}
}

func TestDefaultRegistry(t *testing.T) {
	r := Default()
	want := []string{"clarify", "patch", "read_file", "search_files", "skill_manage", "skill_view", "skills_list", "terminal", "todo", "web_fetch", "write_file"}
	if got := r.Names(); !slices.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	// Names returns a copy.
	r.Names()[0] = "mutated"
	if r.Names()[0] != "clarify" {
		t.Error("Names exposes internal state")
	}
	idempotent := map[string]bool{"read_file": true, "terminal": false, "todo": false, "write_file": false}
	for name, want := range idempotent {
		tool, _ := r.Lookup(name)
		if tool.Idempotent() != want {
			t.Errorf("%s idempotent=%v, want %v", name, tool.Idempotent(), want)
		}
	}
}

func TestDefinitionsAreValidSchemas(t *testing.T) {
	r := Default()
	defs := r.Definitions()
	if len(defs) != len(r.Names()) {
		t.Fatalf("%d definitions for %d tools", len(defs), len(r.Names()))
	}
	wantRequired := map[string][]string{
		"read_file":    {"path"},
		"write_file":   {"path", "content"},
		"patch":        {},
		"search_files": {"pattern"},
		"terminal":     {"command"},
		"todo":         {},
		"clarify":      {"question"},
		"web_fetch":    {"url"},
		"skills_list":  {},
		"skill_view":   {"name"},
		"skill_manage": {"action", "name"},
	}
	for i, def := range defs {
		name := def.Function.Name
		t.Run(name, func(t *testing.T) {
			if def.Type != openai.ToolTypeFunction {
				t.Errorf("type %q", def.Type)
			}
			if name != r.Names()[i] {
				t.Errorf("definition %d is %q, want %q (sorted)", i, name, r.Names()[i])
			}
			if len(def.Function.Description) < 80 {
				t.Errorf("description too thin: %q", def.Function.Description)
			}
			params, err := json.Marshal(def.Function.Parameters)
			if err != nil {
				t.Fatal(err)
			}
			var schema struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
				Required   *[]string                  `json:"required"`
			}
			dec := json.NewDecoder(bytes.NewReader(params))
			if err := dec.Decode(&schema); err != nil {
				t.Fatalf("parameters are not a JSON object: %v\n%s", err, params)
			}
			if schema.Type != "object" || len(schema.Properties) == 0 && len(wantRequired[name]) > 0 {
				t.Errorf("schema type %q with %d properties", schema.Type, len(schema.Properties))
			}
			if schema.Required == nil { // a derived schema of no required argument leaves it out
				schema.Required = &[]string{}
			}
			if !slices.Equal(*schema.Required, wantRequired[name]) {
				t.Errorf("required %v, want %v", *schema.Required, wantRequired[name])
			}
			for _, req := range *schema.Required {
				if _, ok := schema.Properties[req]; !ok {
					t.Errorf("required %q is not a property", req)
				}
			}
			for prop, raw := range schema.Properties {
				var p struct {
					Type        string `json:"type"`
					Description string `json:"description"`
				}
				if err := json.Unmarshal(raw, &p); err != nil || p.Type == "" || p.Description == "" {
					t.Errorf("property %q lacks a type or description: %s", prop, raw)
				}
			}
		})
	}

	// Byte-stable across calls and across registries.
	first, err := json.Marshal(r.Definitions())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		again, _ := json.Marshal(r.Definitions())
		other, _ := json.Marshal(Default().Definitions())
		if !bytes.Equal(first, again) || !bytes.Equal(first, other) {
			t.Fatal("definitions are not byte-stable")
		}
	}
	// Mutating the returned slice does not affect the registry.
	defs[0] = openai.Tool{}
	again, _ := json.Marshal(r.Definitions())
	if !bytes.Equal(first, again) {
		t.Error("Definitions exposes internal state")
	}
}

// TestDefinitionChars: the definitions the registry offers for an allow
// list, and the length it reports for them, are those a model is sent.
func TestDefinitionChars(t *testing.T) {
	t.Parallel()
	r := Default()
	names := r.Names()
	for _, allow := range [][]string{nil, {}, names[:1], names[:3], {names[0], names[len(names)-1]}, {"no_such_tool"}, {"mcp:nothing"}} {
		var defs []openai.Tool
		for _, d := range r.Definitions() {
			if Allows(allow, d.Function.Name) {
				defs = append(defs, d)
			}
		}
		if got := r.DefinitionsFor(allow); !slices.EqualFunc(got, defs, func(a, b openai.Tool) bool { return a.Function.Name == b.Function.Name }) {
			t.Errorf("allow %q: DefinitionsFor gives %d definitions, want %d", allow, len(got), len(defs))
		}
		data, err := json.Marshal(append([]openai.Tool{}, defs...))
		if err != nil {
			t.Fatal(err)
		}
		if len(defs) == 0 {
			data = nil // a request without tools has no "tools" field
		}
		if got := r.DefinitionChars(allow); got != len(data) {
			t.Errorf("allow %q: DefinitionChars %d, the definitions are %d bytes", allow, got, len(data))
		}
	}
}

func TestCall(t *testing.T) {
	toolErr := errors.New("the widget is broken")
	r, err := NewRegistry(
		echoTool(),
		fakeTool{name: "fails", run: func(context.Context, Env, json.RawMessage) (string, error) {
			return "", fmt.Errorf("fails: %w", toolErr)
		}},
		fakeTool{name: "panics", run: func(context.Context, Env, json.RawMessage) (string, error) {
			var m map[string]int
			//lint:ignore SA5000 the tool panics on purpose
			m["boom"]++ // nil map write
			return "", nil
		}},
		fakeTool{name: "panics_value", run: func(context.Context, Env, json.RawMessage) (string, error) {
			panic("custom panic value")
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	env := Env{SessionID: "s1"}
	tests := []struct {
		name    string
		call    Call
		content string // exact, when not an error
		isError bool
		errHas  []string
	}{
		{name: "success", call: Call{ID: "c1", Name: "echo", Arguments: `{"x":"1"}`}, content: `s1:{"x":"1"}`},
		{name: "empty arguments become {}", call: Call{ID: "c2", Name: "echo", Arguments: "  "}, content: `s1:{}`},
		{name: "unknown tool lists tools", call: Call{ID: "c3", Name: "rm_rf", Arguments: `{}`}, isError: true,
			errHas: []string{"unknown tool", `"rm_rf"`, "echo, fails, panics, panics_value"}},
		{name: "malformed JSON", call: Call{ID: "c4", Name: "echo", Arguments: `{"x":`}, isError: true,
			errHas: []string{"invalid arguments", "malformed JSON"}},
		{name: "tool error", call: Call{ID: "c5", Name: "fails", Arguments: `{}`}, isError: true,
			errHas: []string{"the widget is broken"}},
		{name: "runtime panic recovered", call: Call{ID: "c6", Name: "panics", Arguments: `{}`}, isError: true,
			errHas: []string{"tool panicked", "panics", "nil map"}},
		{name: "panic value recovered", call: Call{ID: "c7", Name: "panics_value", Arguments: `{}`}, isError: true,
			errHas: []string{"tool panicked", "custom panic value"}},
		{name: "real tool bad arguments", call: Call{ID: "c8", Name: "echo", Arguments: `[1,2]`}, content: `s1:[1,2]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := r.Call(context.Background(), env, tc.call)
			if res.CallID != tc.call.ID || res.Name != tc.call.Name {
				t.Errorf("result identifies %q/%q, want %q/%q", res.CallID, res.Name, tc.call.ID, tc.call.Name)
			}
			if res.IsError != tc.isError {
				t.Fatalf("IsError=%v, content %s", res.IsError, res.Content)
			}
			if res.Duration <= 0 {
				t.Errorf("duration %v", res.Duration)
			}
			if !tc.isError {
				if res.Content != tc.content {
					t.Errorf("content %q, want %q", res.Content, tc.content)
				}
				return
			}
			var body struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal([]byte(res.Content), &body); err != nil || body.Error == "" {
				t.Fatalf("error content is not {\"error\":...}: %s", res.Content)
			}
			for _, s := range tc.errHas {
				if !strings.Contains(body.Error, s) {
					t.Errorf("error %q does not mention %q", body.Error, s)
				}
			}
		})
	}
}

func TestCallDefaultToolsBadArguments(t *testing.T) {
	r := Default()
	env := Env{Workdir: t.TempDir()}
	for _, c := range []Call{
		{ID: "1", Name: "read_file", Arguments: `{"path":42.5}`},
		{ID: "2", Name: "write_file", Arguments: `"just a string"`},
		{ID: "3", Name: "terminal", Arguments: `{"command":null}`},
		{ID: "4", Name: "todo", Arguments: `{"todos":{"id":"1"}}`},
		{ID: "5", Name: "read_file", Arguments: `not json at all`},
	} {
		res := r.Call(context.Background(), env, c)
		if !res.IsError || !strings.Contains(res.Content, "invalid arguments") {
			t.Errorf("%s %s: got %+v", c.Name, c.Arguments, res)
		}
	}
}

// sleepTool sleeps for the duration given in its "ms" argument and records
// when it started and finished.
type sleepTool struct {
	mu    sync.Mutex
	spans map[string][2]time.Time
}

func (s *sleepTool) tool() fakeTool {
	return fakeTool{name: "sleep", run: func(ctx context.Context, _ Env, args json.RawMessage) (string, error) {
		var a struct {
			ID string `json:"id"`
			MS int    `json:"ms"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return "", err
		}
		start := time.Now()
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
		case <-ctx.Done():
			return "", fmt.Errorf("%w: %w", ErrCancelled, ctx.Err())
		}
		s.mu.Lock()
		s.spans[a.ID] = [2]time.Time{start, time.Now()}
		s.mu.Unlock()
		return "slept " + a.ID, nil
	}}
}

func TestRunBatchOrderAndConcurrency(t *testing.T) {
	st := &sleepTool{spans: map[string][2]time.Time{}}
	r, err := NewRegistry(st.tool(), echoTool())
	if err != nil {
		t.Fatal(err)
	}
	calls := []Call{
		{ID: "a", Name: "sleep", Arguments: `{"id":"a","ms":400}`},
		{ID: "b", Name: "sleep", Arguments: `{"id":"b","ms":200}`},
		{ID: "c", Name: "sleep", Arguments: `{"id":"c","ms":50}`},
		{ID: "d", Name: "nope", Arguments: `{}`},
	}
	results := r.RunBatch(context.Background(), Env{}, calls)

	if len(results) != len(calls) {
		t.Fatalf("%d results for %d calls", len(results), len(calls))
	}
	for i, res := range results {
		if res.CallID != calls[i].ID || res.Name != calls[i].Name {
			t.Errorf("result %d is %s/%s, want %s/%s", i, res.CallID, res.Name, calls[i].ID, calls[i].Name)
		}
	}
	for i, id := range []string{"a", "b", "c"} {
		if results[i].IsError || results[i].Content != "slept "+id {
			t.Errorf("result %d: %+v", i, results[i])
		}
	}
	if !results[3].IsError {
		t.Error("unknown tool in a batch did not fail")
	}
	// They overlapped: every call started before the slowest finished.
	// That the batch takes the longest call's time, not the sum, is
	// BenchmarkRunBatchConcurrency's to show.
	a := st.spans["a"]
	for _, id := range []string{"b", "c"} {
		if sp := st.spans[id]; !sp[0].Before(a[1]) {
			t.Errorf("call %s started after a finished", id)
		}
	}
	if c := st.spans["c"]; !c[1].Before(a[1]) {
		t.Error("the fastest call did not finish before the slowest")
	}
}

func TestRunBatchEdges(t *testing.T) {
	r, err := NewRegistry(echoTool())
	if err != nil {
		t.Fatal(err)
	}
	if got := r.RunBatch(context.Background(), Env{}, nil); len(got) != 0 {
		t.Errorf("empty batch returned %v", got)
	}
	got := r.RunBatch(context.Background(), Env{SessionID: "s"}, []Call{{ID: "only", Name: "echo", Arguments: `{}`}})
	if len(got) != 1 || got[0].CallID != "only" || got[0].Content != "s:{}" {
		t.Errorf("single call: %+v", got)
	}
}

func TestRunBatchCancellation(t *testing.T) {
	started := make(chan string, 64)
	blocking := fakeTool{name: "block", run: func(ctx context.Context, _ Env, args json.RawMessage) (string, error) {
		started <- string(args)
		<-ctx.Done()
		return "", fmt.Errorf("block: %w: %w", ErrCancelled, ctx.Err())
	}}
	r, err := NewRegistry(blocking)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("cancelled before start", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		calls := []Call{{ID: "1", Name: "block"}, {ID: "2", Name: "block"}}
		for i, res := range r.RunBatch(ctx, Env{}, calls) {
			if !res.IsError || res.CallID != calls[i].ID || !strings.Contains(res.Content, "not started") {
				t.Errorf("result %d: %+v", i, res)
			}
		}
		if len(started) != 0 {
			t.Error("a tool ran despite the cancelled context")
		}
	})

	t.Run("cancelled while running", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		n := maxParallel + 3 // some calls wait for a slot and never start
		calls := make([]Call, n)
		for i := range calls {
			calls[i] = Call{ID: fmt.Sprint("call-", i), Name: "block", Arguments: fmt.Sprintf(`{"i":%d}`, i)}
		}
		go func() {
			for i := 0; i < maxParallel; i++ {
				<-started
			}
			cancel()
		}()
		done := make(chan []Result)
		go func() { done <- r.RunBatch(ctx, Env{}, calls) }()
		var results []Result
		select {
		case results = <-done:
		case <-time.After(time.Minute):
			t.Fatal("RunBatch did not return within a minute of the cancellation")
		}
		notStarted := 0
		for i, res := range results {
			if res.CallID != calls[i].ID {
				t.Errorf("result %d has id %s", i, res.CallID)
			}
			if !res.IsError || !strings.Contains(res.Content, "cancelled") {
				t.Errorf("result %d: %+v", i, res)
			}
			if strings.Contains(res.Content, "not started") {
				notStarted++
			}
		}
		if notStarted != n-maxParallel {
			t.Errorf("%d calls reported not started, want %d", notStarted, n-maxParallel)
		}
	})
}

func TestRunBatchCancellationKillsTerminals(t *testing.T) {
	r := Default()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Each command sleeps two minutes: a cancellation that did not kill
	// them would not end the batch within a minute.
	calls := []Call{
		{ID: "t1", Name: "terminal", Arguments: `{"command":"echo $$ > pid1; sleep 120"}`},
		{ID: "t2", Name: "terminal", Arguments: `{"command":"echo $$ > pid2; sleep 120"}`},
	}
	go func() { // cancel once both commands have written their pids
		for giveUp := time.Now().Add(time.Minute); time.Now().Before(giveUp); time.Sleep(10 * time.Millisecond) {
			if pidWritten(filepath.Join(dir, "pid1")) && pidWritten(filepath.Join(dir, "pid2")) {
				break
			}
		}
		cancel()
	}()
	done := make(chan []Result, 1)
	go func() { done <- r.RunBatch(ctx, Env{Workdir: dir, Policy: unsandboxed}, calls) }()
	var results []Result
	select {
	case results = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the cancelled batch still ran a minute later")
	}
	for i, res := range results {
		if res.CallID != calls[i].ID || !res.IsError || !strings.Contains(res.Content, "cancelled") {
			t.Errorf("result %d: %+v", i, res)
		}
	}
	for _, f := range []string{"pid1", "pid2"} {
		out, err := runTool(t, ReadFile, Env{Workdir: dir}, fmt.Sprintf(`{"path":%q}`, f))
		if err != nil {
			t.Fatal(err)
		}
		line := strings.TrimSpace(strings.TrimPrefix(decode[readFileResult](t, out).Content, "     1|"))
		pgid := firstInt(t, line)
		assertGroupGone(t, pgid, pgid)
	}
}

// pidWritten reports whether the file at path holds a whole line.
func pidWritten(path string) bool {
	data, err := os.ReadFile(path)
	return err == nil && strings.HasSuffix(string(data), "\n")
}

func TestQuickTools(t *testing.T) {
	r, err := NewRegistry(ReadFile, WriteFile, Terminal, Todo, Clarify(), Memory(""), SessionSearch(nil))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"read_file": true, "write_file": true, "todo": true, "memory": true, "session_search": true, "clarify": true,
		"terminal": false, "no_such_tool": false,
	} {
		if got := r.Quick(name); got != want {
			t.Errorf("Quick(%q) = %v, want %v", name, got, want)
		}
	}
}
