package activities

import (
	"fmt"
	"time"
)

// Usage counts tokens reported by the provider.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		TotalTokens:      u.TotalTokens + o.TotalTokens,
	}
}

// BeginTurnInput starts a turn: the session is created when new and the
// user's message is persisted.
type BeginTurnInput struct {
	TurnID      string
	SessionID   string
	TurnNumber  int
	Model       string
	UserMessage string
	StartedAt   time.Time
}

// BeginTurnResult names the persisted user message.
type BeginTurnResult struct {
	UserMessageID int64
}

// CallModelInput asks for one model call over the session's stored messages.
type CallModelInput struct {
	TurnID    string
	SessionID string
	// Call is the 1-based number of this model call within the turn; with
	// TurnID it forms the idempotency key of the reply.
	Call  int
	Model string
	// ToolsEnabled offers the tool registry; false forces a text answer.
	ToolsEnabled bool
	// ExtraUserMessage is appended to the request only, never persisted
	// (e.g. the request for a summary at the iteration cap).
	ExtraUserMessage string
	Workdir          string
}

// ToolCallRef identifies one requested tool call without its arguments.
type ToolCallRef struct {
	ID   string
	Name string
}

// CallModelResult describes the persisted reply.
type CallModelResult struct {
	MessageID    int64
	FinishReason string
	ToolCalls    []ToolCallRef
	// TextChars is the length of the visible text (reasoning blocks removed).
	TextChars int
	Usage     Usage
}

// ExecuteToolsInput runs the tool calls of one assistant message.
type ExecuteToolsInput struct {
	TurnID             string
	SessionID          string
	Call               int
	AssistantMessageID int64
	Workdir            string
}

// ExecuteToolsResult summarises a tool batch.
type ExecuteToolsResult struct {
	ResultMessageIDs []int64
	Failed           int
}

// FinishTurnInput records how a turn ended.
type FinishTurnInput struct {
	TurnID     string
	SessionID  string
	TurnNumber int
	Model      string
	Status     string
	ExitReason string
	Error      string
	APICalls   int
	Usage      Usage
	// FinalMessageID is the assistant message holding the final answer (0: none).
	FinalMessageID int64
	StartedAt      time.Time
	EndedAt        time.Time
}

// FinishTurnResult carries the final answer's text.
type FinishTurnResult struct {
	FinalResponse string
	HasFinal      bool
}

// Idempotency keys of the messages a turn writes.
func userKey(turnID string) string                 { return turnID + "/user" }
func replyKey(turnID string, call int) string      { return fmt.Sprintf("%s/call-%d/assistant", turnID, call) }
func toolKey(turnID string, call int, id string) string {
	return fmt.Sprintf("%s/call-%d/tool/%s", turnID, call, id)
}
