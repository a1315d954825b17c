package models

import (
	"time"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Session is one conversation. Its ID is chosen by the caller.
//
// Context compression replaces a long session by a child session (see
// Store.CompactSession); the sessions linked that way form a lineage, a
// chain from the root session to its newest descendant (Store.Tip).
type Session struct {
	ID    string `gorm:"primaryKey;size:128"`
	Model string `gorm:"serializer:text"`
	Title string `gorm:"serializer:text"`
	// ParentSessionID is the session this one was compacted from; empty for
	// a root.
	ParentSessionID string `gorm:"index;size:128;not null;default:''"`
	// LineageID is the ID of the root of the session's lineage: its own ID
	// for a root. Rows written before lineages existed have it empty in
	// the database; the Store reads them with their own ID filled in.
	LineageID string `gorm:"index;size:128;not null;default:''"`
	// Generation counts compactions from the root: 0 for a root, its
	// parent's plus one for a child.
	Generation int `gorm:"not null;default:0"`
	// DelegatedFrom is the session whose delegate_task call made this one
	// (a sub-agent's task); empty for every other session.
	DelegatedFrom string `gorm:"index;size:128;not null;default:''"`
	// Owner is whose session this is: the key of the gateway chat it
	// belongs to ("telegram:dm:42", models.Chat.Key), or "" for the
	// operator's own (the CLI, the API, editors, the operator's cron
	// jobs). A search of past sessions from an owned session finds only
	// sessions of the same owner (Scope). Sessions made from a session (a
	// compaction's child, a delegated task, a fork) keep its owner, and a
	// set owner never changes (see EnsureOwnedSession).
	Owner     string `gorm:"index;size:512;not null;default:'';serializer:text"`
	TurnCount int    // number of turns started, see Store.NextTurn
	// LastReservation is the key of the reservation that counted the latest
	// turn, so a retried reservation does not count it twice.
	LastReservation string `gorm:"size:256;not null;default:'';serializer:text" json:"-"`
	// SystemPrompt is built once, when the session's first turn begins, and
	// sent byte for byte on every later call (providers cache prompts by
	// prefix); only compression rebuilds it.
	SystemPrompt string `gorm:"type:text;serializer:text"`
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// ToolCall is a tool invocation requested by the assistant, in the OpenAI
// chat-completions wire shape.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function a ToolCall invokes and carries its
// arguments as raw JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message is one entry of a session's conversation. IDs grow with insertion
// order, so a session's messages are ordered by ID.
type Message struct {
	ID        int64  `gorm:"primaryKey;autoIncrement"`
	SessionID string `gorm:"index;size:128"`
	TurnID    string `gorm:"index;size:256"`
	// IdemKey is the idempotency key: appending a message whose key is
	// already stored yields the stored row instead of a new one.
	IdemKey      string     `gorm:"uniqueIndex;size:512;serializer:text"`
	Role         string     // system, user, assistant or tool
	Content      string     `gorm:"type:text;serializer:text"`
	Reasoning    string     `gorm:"type:text;serializer:text"`
	ToolCalls    []ToolCall `gorm:"serializer:toolcalls;type:text"` // assistant tool calls
	ToolCallID   string     `gorm:"serializer:text"`                // the call answered by a role=tool message
	Name         string     `gorm:"serializer:text"`                // the tool name of a role=tool message
	FinishReason string     `gorm:"serializer:text"`
	// PromptTokens and CompletionTokens are the usage the provider reported
	// for the call that produced an assistant message.
	PromptTokens     int64
	CompletionTokens int64
	// Replay is provider state the reply must be sent back with (JSON of
	// llm.Replay: Anthropic's signed thinking blocks, the Responses API's
	// reasoning items); empty for most messages.
	Replay string `gorm:"type:text;serializer:text"`
	// Hidden keeps a message out of the conversation (Messages) while keeping
	// it for the record: a reply the loop discarded and asked again for.
	Hidden bool `gorm:"not null;default:false"`
	// Steer marks a user message sent while a turn was running, to redirect
	// it: it is shown to the model inside the tool result it follows.
	Steer bool `gorm:"not null;default:false"`
	// Images are the pictures sent with a user message.
	Images    []turnapi.Image `gorm:"serializer:json;type:text"`
	CreatedAt time.Time
}

// Turn records one conversation turn; its ID is the workflow ID.
type Turn struct {
	ID               string `gorm:"primaryKey;size:256"`
	SessionID        string `gorm:"index;size:128"`
	Number           int
	Model            string `gorm:"serializer:text"`
	Status           string // running, completed, failed, interrupted, ...
	ExitReason       string `gorm:"serializer:text"`
	Error            string `gorm:"type:text;serializer:text"`
	FinalResponse    string `gorm:"type:text;serializer:text"`
	APICalls         int
	PromptTokens     int64
	CompletionTokens int64
	TotalTokens      int64
	StartedAt        time.Time
	EndedAt          *time.Time
}

// todoList holds a session's todo list as JSON text.
type todoList struct {
	SessionID string `gorm:"primaryKey;size:128"`
	Data      string `gorm:"type:text;serializer:text"`
	UpdatedAt time.Time
}

func (todoList) TableName() string { return "todos" }

// schema lists the tables Open migrates.
var schema = []any{&Session{}, &Message{}, &Turn{}, &todoList{}, &approvalGrant{}, &toolClaim{}, &CronJob{}, &CronRun{}, &SchedulerBeat{}, &outboxEntry{}, &lease{}, &pairingCode{}, &pairedUser{}, &Chat{}, &homeChat{}, &retiredLineage{}, &ModelCall{}, &KeyCooldown{}, &Attachment{}, &installSecret{}, &SessionSummary{}, &recallBlock{}}
