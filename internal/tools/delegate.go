package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// DelegateTaskName is the delegate_task tool's name.
const DelegateTaskName = "delegate_task"

// NotDelegated are the tools a delegated task never gets: it has nobody to
// ask or message, and it does not change the agent's memory (the memory it
// needs is in its prompt).
var NotDelegated = []string{ClarifyName, "send_message", "memory"}

const delegateDescription = `Hand work to sub-agents: each task runs as its own turn in a new session, with a fresh context, its own iteration budget and the tools you give it (toolsets), while you wait. ` +
	`Several tasks run at the same time (up to the configured limit; the rest wait their turn). ` +
	`Give each task a complete goal and the context it needs: it sees nothing of this conversation. ` +
	`Sub-agents cannot ask the user, send messages or change memory; a command of theirs that needs approval waits for the user, as yours would. ` +
	`The result has one entry per task, in task order: its final answer, how it ended (stop_reason) and its usage. ` +
	`Use it for independent pieces of a larger job; do small steps yourself.`

const delegateSchema = `{"type":"object","properties":{` +
	`"tasks":{"type":"array","minItems":1,"maxItems":8,"description":"The tasks, run as separate sub-agents.","items":{"type":"object","properties":{` +
	`"goal":{"type":"string","description":"What the sub-agent must achieve, complete and self-contained."},` +
	`"context":{"type":"string","description":"Facts, paths and constraints it needs."},` +
	`"toolsets":{"type":"array","items":{"type":"string"},"description":"Toolsets or tools it may use (e.g. [\"file\",\"web\"]); default: yours, less those sub-agents never get."},` +
	`"max_iterations":{"type":"integer","minimum":1,"description":"Its iteration budget; default the configured delegation.max_iterations."}` +
	`},"required":["goal"],"additionalProperties":false}}` +
	`},"required":["tasks"],"additionalProperties":false}`

// TaskSpec is one task of a delegate_task call, as the model wrote it.
type TaskSpec struct {
	Goal          string   `json:"goal"`
	Context       string   `json:"context"`
	Toolsets      []string `json:"toolsets"`
	MaxIterations int      `json:"max_iterations"`
}

// DelegateTaskTool is the delegate_task tool's entry in the registry. Its
// calls are run by the turn workflow, as child turns; the registry never
// runs one.
type DelegateTaskTool struct{}

// Name implements Tool.
func (DelegateTaskTool) Name() string { return DelegateTaskName }

// Idempotent implements Tool: its tasks can do anything.
func (DelegateTaskTool) Idempotent() bool { return false }

// Definition implements Tool.
func (t DelegateTaskTool) Definition() openai.Tool {
	return functionTool(t.Name(), delegateDescription, delegateSchema)
}

// Run implements Tool: a delegation is not a function call.
func (DelegateTaskTool) Run(context.Context, Env, json.RawMessage) (string, error) {
	return "", errors.New("delegate_task runs its tasks as sub-agent turns of the conversation; it cannot be called from here")
}

// DelegateTasks reads a delegate_task call's tasks, refusing what cannot
// run: no task, more than max, a task without a goal, a goal and context
// longer than maxBytes, a negative budget.
func DelegateTasks(args string, max, maxBytes int) ([]TaskSpec, error) {
	var call struct {
		Tasks []TaskSpec `json:"tasks"`
	}
	dec := json.NewDecoder(strings.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&call); err != nil {
		return nil, fmt.Errorf("%w for delegate_task: %v", ErrInvalidArguments, err)
	}
	switch {
	case len(call.Tasks) == 0:
		return nil, fmt.Errorf("%w for delegate_task: \"tasks\" must hold at least one task", ErrInvalidArguments)
	case len(call.Tasks) > max:
		return nil, fmt.Errorf("%w for delegate_task: %d tasks; at most %d in one call", ErrInvalidArguments, len(call.Tasks), max)
	}
	for i, t := range call.Tasks {
		switch {
		case strings.TrimSpace(t.Goal) == "":
			return nil, fmt.Errorf("%w for delegate_task: task %d has no goal", ErrInvalidArguments, i+1)
		case len(t.Goal)+len(t.Context) > maxBytes:
			return nil, fmt.Errorf("%w for delegate_task: task %d's goal and context are %d bytes; at most %d", ErrInvalidArguments, i+1, len(t.Goal)+len(t.Context), maxBytes)
		case t.MaxIterations < 0:
			return nil, fmt.Errorf("%w for delegate_task: task %d's max_iterations must be positive", ErrInvalidArguments, i+1)
		}
	}
	return call.Tasks, nil
}

// delegate_task is a built-in tool.
var _ = builtin(func(Services) Tool { return DelegateTaskTool{} })

// Meta implements Described.
func (DelegateTaskTool) Meta() Meta {
	return Meta{
		Toolset:      "delegation",
		Guidance:     "Hand independent pieces of a large job to delegate_task, each with a complete goal and the context it needs (a sub-agent sees nothing of this conversation); do small steps yourself.",
		GuidanceRank: 100,
		Approval:     "tasks get no clarify, send_message or memory; their approvals are asked in the parent's session",
	}
}
