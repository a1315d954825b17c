package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// maxParallel bounds how many calls of one batch run at the same time.
const maxParallel = 8

// OutputBounder is a Tool that bounds its own result to the output cap and
// keeps the whole itself when it cuts (terminal, read_file): the registry
// neither keeps a second copy nor cuts it again unless it overran.
type OutputBounder interface {
	BoundsOwnOutput() bool
}

// errNotStarted marks a call cancelled before its tool started.
var errNotStarted = errors.New("not started")

// Registry is an immutable set of tools, safe for concurrent use.
type Registry struct {
	tools map[string]Tool
	names []string      // sorted
	defs  []openai.Tool // sorted by name
	// defChars[i] is the JSON length of defs[i] (DefinitionChars).
	defChars []int
	// quickTimeout overrides QuickTimeout when positive.
	quickTimeout time.Duration
}

// Call is one tool call requested by the model.
type Call struct {
	ID        string
	Name      string
	Arguments string // JSON object, as the model sent it
}

// Result is the outcome of one Call, ready to be sent back to the model.
type Result struct {
	CallID  string
	Name    string
	Content string
	IsError bool
	// Cancelled: the call was cancelled (its context was done) before or
	// while it ran; Content says which.
	Cancelled bool
	// NotStarted: the call was cancelled before its tool started.
	NotStarted bool
	// TimedOut: a quick call overran its deadline and was abandoned.
	TimedOut bool
	Duration time.Duration
}

// NewRegistry builds a registry. It fails on a nil tool, an empty name,
// two tools with the same name or a definition that does not encode as
// JSON.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{tools: make(map[string]Tool, len(tools))}
	for i, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("new registry: tool %d is nil", i)
		}
		name := t.Name()
		if name == "" {
			return nil, fmt.Errorf("new registry: tool %d (%T) has an empty name", i, t)
		}
		if _, dup := r.tools[name]; dup {
			return nil, fmt.Errorf("new registry: %w: %q", ErrDuplicateTool, name)
		}
		r.tools[name] = t
		r.names = append(r.names, name)
	}
	sort.Strings(r.names)
	for _, name := range r.names {
		def := r.tools[name].Definition()
		data, err := json.Marshal(def)
		if err != nil {
			return nil, fmt.Errorf("new registry: tool %q: definition: %w", name, err)
		}
		r.defs = append(r.defs, def)
		r.defChars = append(r.defChars, len(data))
	}
	return r, nil
}

// Default returns a registry with the built-in tools that need nothing
// configured: read_file, write_file, patch, search_files, web_fetch,
// terminal, todo, clarify and the skills tools (over Policy.Home's skills).
func Default() *Registry {
	r, err := NewRegistry(ReadFile, WriteFile, Patch, SearchFiles, WebFetch, Terminal, Todo, Clarify(),
		SkillsList(""), SkillView(""), SkillManage(""))
	if err != nil {
		// The built-in names are distinct constants and their schemas
		// fixed JSON (TestDefinitionsAreValidSchemas); this cannot happen.
		panic(fmt.Sprintf("tools: default registry: %v", err))
	}
	return r
}

// Lookup returns the tool with the given name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// Names returns the tool names, sorted.
func (r *Registry) Names() []string {
	return append([]string(nil), r.names...)
}

// Definitions returns the tools' definitions sorted by name. The output is
// computed once, so it is byte-stable across calls.
func (r *Registry) Definitions() []openai.Tool {
	return append([]openai.Tool(nil), r.defs...)
}

// DefinitionsFor returns the definitions of the tools allow admits (every
// tool when allow is empty), sorted by name: what a model is offered.
func (r *Registry) DefinitionsFor(allow []string) []openai.Tool {
	var out []openai.Tool
	for i := range r.defs {
		if r.admits(i, allow) {
			out = append(out, r.defs[i])
		}
	}
	return out
}

// DefinitionChars is the length of the JSON array of DefinitionsFor(allow),
// as it is sent to a model (0 when it is empty: the request then has no
// tools), without encoding the definitions again: the estimate of their
// share of a context.
func (r *Registry) DefinitionChars(allow []string) int {
	n, chars := 0, 0
	for i := range r.defs {
		if r.admits(i, allow) {
			n++
			chars += r.defChars[i]
		}
	}
	if n == 0 {
		return 0
	}
	return chars + n - 1 + len("[]")
}

// admits reports whether allow admits the tool of definition i.
func (r *Registry) admits(i int, allow []string) bool {
	f := r.defs[i].Function
	return f != nil && Allows(allow, f.Name)
}

// Call runs one call. It never fails: an unknown tool, malformed
// arguments, a tool error, a cancelled context or a panic inside the tool
// all become a Result with IsError set and a message for the model.
func (r *Registry) Call(ctx context.Context, env Env, c Call) Result {
	start := time.Now()
	env.CallID = c.ID
	content, err := r.runBounded(ctx, env, c)
	t, _ := r.Lookup(c.Name)
	ob, selfBounded := t.(OutputBounder)
	res := Result{CallID: c.ID, Name: c.Name, Content: env.boundResult(content, selfBounded && ob.BoundsOwnOutput()), Duration: time.Since(start)}
	if err != nil {
		res.IsError = true
		res.Cancelled = errors.Is(err, ErrCancelled)
		res.NotStarted = errors.Is(err, errNotStarted)
		res.TimedOut = errors.Is(err, ErrTimedOut)
		res.Content = errorContent(err, env.maxOutput())
	}
	slog.DebugContext(ctx, "tool call",
		"tool", c.Name, "call_id", c.ID, "session_id", env.SessionID, "turn_id", env.TurnID,
		"is_error", res.IsError, "duration", res.Duration)
	return res
}

// runBounded runs a call under the tool's deadline, if it has one. The tool
// runs in its own goroutine: when the deadline passes or ctx is cancelled,
// the call is answered at once and the goroutine is left to finish (or stay
// stuck in a system call) on its own, so it never holds the batch.
func (r *Registry) runBounded(ctx context.Context, env Env, c Call) (string, error) {
	t, ok := r.Lookup(c.Name)
	limit := time.Duration(0)
	if ok {
		limit = r.deadline(t)
	}
	if limit <= 0 {
		return r.run(ctx, env, c)
	}
	tctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	type outcome struct {
		content string
		err     error
	}
	done := make(chan outcome, 1) // buffered: an abandoned run does not leak blocked on send
	go func() {
		content, err := r.run(tctx, env, c)
		done <- outcome{content, err}
	}()
	var o outcome
	select {
	case o = <-done:
	case <-tctx.Done():
		select {
		case o = <-done: // finished at the same moment: keep its result
		default:
			o = outcome{err: fmt.Errorf("%w: %s was interrupted while it ran: %w", ErrCancelled, c.Name, tctx.Err())}
		}
	}
	if o.err != nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		return "", overran(t, limit)
	}
	return o.content, o.err
}

// overran is the error of a quick call abandoned after limit.
func overran(t Tool, limit time.Duration) error {
	effect := " and had no effect"
	if !t.Idempotent() {
		effect = "; it may or may not have taken effect, so check before doing it again"
	}
	return fmt.Errorf("%w: %s did not finish within %s (a file or lock that never answers?) and was abandoned%s",
		ErrTimedOut, t.Name(), limit, effect)
}

func (r *Registry) run(ctx context.Context, env Env, c Call) (content string, err error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("%w: %s was %w: %w", ErrCancelled, c.Name, errNotStarted, err)
	}
	t, ok := r.Lookup(c.Name)
	if !ok {
		return "", fmt.Errorf("%w %q; available tools: %s", ErrUnknownTool, c.Name, strings.Join(r.names, ", "))
	}
	raw := bytes.TrimSpace([]byte(c.Arguments))
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if !json.Valid(raw) {
		return "", fmt.Errorf("%w for %s: malformed JSON: %s", ErrInvalidArguments, c.Name, snippet(raw))
	}
	defer func() {
		if p := recover(); p != nil {
			slog.ErrorContext(ctx, "tool panicked", "tool", c.Name, "call_id", c.ID, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			content, err = "", fmt.Errorf("%w: %s: %v", ErrToolPanic, c.Name, p)
		}
	}()
	return t.Run(ctx, env, raw)
}

// errorContent renders an error for the model as {"error": message}.
func errorContent(err error, maxChars int) string {
	msg := capMiddle(err.Error(), maxChars)
	data, mErr := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	if mErr != nil {
		return msg
	}
	return string(data)
}

// RunBatch runs the calls of one model response. A single call runs
// directly; several run concurrently (at most maxParallel at a time). The
// results come back in the original call order, exactly one per call.
// Cancelling ctx stops running tools, and calls not yet started get a
// cancelled error result.
func (r *Registry) RunBatch(ctx context.Context, env Env, calls []Call) []Result {
	results := make([]Result, len(calls))
	switch len(calls) {
	case 0:
		return results
	case 1:
		results[0] = r.Call(ctx, env, calls[0])
		return results
	}
	sem := make(chan struct{}, maxParallel)
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
			}
			// Call reports a cancelled context without starting the tool.
			results[i] = r.Call(ctx, env, c)
		}()
	}
	wg.Wait()
	return results
}
