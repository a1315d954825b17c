package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// DefaultMaxOutputChars is the cap on tool output used when
// Env.MaxOutputChars is zero.
const DefaultMaxOutputChars = 50_000

// Sentinel errors. Tool and registry errors wrap them, so callers can test
// with errors.Is.
var (
	// ErrUnknownTool: the model called a tool the registry does not have.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrDuplicateTool: two tools with the same name were registered.
	ErrDuplicateTool = errors.New("duplicate tool name")
	// ErrInvalidArguments: the call's arguments are malformed JSON, have
	// the wrong types, miss a required field or hold an invalid value.
	ErrInvalidArguments = errors.New("invalid arguments")
	// ErrBinaryFile: read_file refused a file that looks binary.
	ErrBinaryFile = errors.New("binary file")
	// ErrNoTodoStore: the todo tool ran without Env.Todos.
	ErrNoTodoStore = errors.New("no todo store configured")
	// ErrCancelled: the call was cancelled before or while it ran.
	ErrCancelled = errors.New("cancelled")
	// ErrToolPanic: the tool panicked; the registry recovered it.
	ErrToolPanic = errors.New("tool panicked")
)

// Env is what a tool run knows about its surroundings.
type Env struct {
	// Workdir is the default working directory; relative paths resolve
	// against it. It is the directory the user started `talaria chat` in.
	// Empty means the process's current directory.
	Workdir   string
	SessionID string
	TurnID    string
	// Owner is whose session this is, read from the store: a gateway
	// chat's key, "" for the operator's. OwnerKnown is false when it could
	// not be read. A tool that reaches memory kept per user (an external
	// memory provider's) acts as Owner, and refuses when it is not known.
	Owner      string
	OwnerKnown bool
	// ModelCall is the number of the model call within the turn whose
	// tool calls run; CallID is the id of the call running (the registry
	// sets it). Together with TurnID they name the call.
	ModelCall int
	CallID    string
	// Todos persists the todo tool's list. Nil makes the todo tool fail
	// with ErrNoTodoStore.
	Todos TodoStore
	// MaxOutputChars caps tool output; 0 means DefaultMaxOutputChars.
	MaxOutputChars int
	// OutputDir, when set, is $TALARIA_HOME/outputs: a tool output longer
	// than the cap is kept in full in the conversation's directory there
	// (OutputDir/SessionDirName(OutputsKey); the model gets its head and
	// tail and the file's name), within Policy.OutputQuota. read_file may
	// read the conversation's kept outputs whatever the read roots, and
	// nothing else under OutputDir.
	OutputDir string
	// OutputsKey names the conversation whose kept outputs this call
	// writes and reads: the session's lineage, so a session made by a
	// compaction still reads what its parent kept (its summary may name
	// those files). Empty: SessionID.
	OutputsKey string
	// Policy bounds the environment, files and roots tools may touch; the
	// zero value is the safe default.
	Policy Policy
	// Allowed, when set, says whether the turn may use a tool (the turn's
	// tool list); nil allows every tool. execute_code's tool calls ask it.
	Allowed func(tool string) bool
	// CommandGate decides whether a shell command that reaches a tool
	// without the approval step of a model's call (a terminal call made by
	// an execute_code snippet) may run: nil error runs it, an error is the
	// refusal the snippet reads. A nil CommandGate refuses every such
	// command.
	CommandGate func(command, workdir string) error
	// Escalated says whether the call with this id may run its command
	// outside the sandbox (terminal's outside_sandbox): true only for a
	// call of the model's batch that went through the approval step, whose
	// assessment asks a person for exactly that. Nil: no call may.
	Escalated func(callID string) bool
}

// outputsKey is the directory key of the conversation's kept outputs.
func (e Env) outputsKey() string {
	if e.OutputsKey != "" {
		return e.OutputsKey
	}
	return e.SessionID
}

// maxOutput returns the effective output cap.
func (e Env) maxOutput() int {
	if e.MaxOutputChars <= 0 {
		return DefaultMaxOutputChars
	}
	return e.MaxOutputChars
}

// resolvePath turns a path argument into an absolute, cleaned path: "~" and
// "~/..." expand to the home directory, relative paths resolve against
// Env.Workdir.
func (e Env) resolvePath(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("expand %q: %w", p, err)
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	base := e.Workdir
	if base == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("resolve %q: current directory: %w", p, err)
		}
		base = wd
	} else if !filepath.IsAbs(base) {
		abs, err := filepath.Abs(base)
		if err != nil {
			return "", fmt.Errorf("resolve workdir %q: %w", base, err)
		}
		base = abs
	}
	return filepath.Join(base, p), nil
}

// TodoItem is one entry of the todo tool's task list.
type TodoItem struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	// Status is one of pending, in_progress, completed, cancelled.
	Status string `json:"status"`
}

// Todo statuses.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
	TodoCancelled  = "cancelled"
)

// TodoStore persists a session's todo list.
type TodoStore interface {
	LoadTodos(ctx context.Context, sessionID string) ([]TodoItem, error)
	SaveTodos(ctx context.Context, sessionID string, items []TodoItem) error
}

// Tool is one function the model can call.
type Tool interface {
	// Name is the function name the model calls.
	Name() string
	// Definition is the OpenAI function-calling definition. It must be
	// byte-stable across calls.
	Definition() openai.Tool
	// Idempotent reports whether running the tool twice with the same
	// arguments is safe; the engine uses it to decide whether to re-run a
	// call after a crash.
	Idempotent() bool
	// Run executes the call. The string is what the model sees; an error
	// is a tool failure that the caller reports to the model as an error
	// result.
	Run(ctx context.Context, env Env, args json.RawMessage) (string, error)
}

// functionTool builds an openai.Tool from a name, description and JSON
// schema. The schema is kept as raw bytes so it marshals byte-identically
// every time.
func functionTool(name, description, schema string) openai.Tool {
	return openai.Tool{
		Type: openai.ToolTypeFunction,
		Function: &openai.FunctionDefinition{
			Name:        name,
			Description: description,
			Parameters:  json.RawMessage(schema),
		},
	}
}
