package workflows

import (
	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/activities"
)

// ConversationResult is the typed outcome of one turn. The workflow returns
// it without Messages; clients fill Messages from the store.
type ConversationResult struct {
	FinalResponse  *string                        `json:"final_response"`
	Completed      bool                           `json:"completed"`
	Partial        bool                           `json:"partial"`
	Interrupted    bool                           `json:"interrupted"`
	Failed         bool                           `json:"failed"`
	TurnExitReason StopReason                     `json:"turn_exit_reason"`
	Error          *string                        `json:"error"`
	APICalls       int                            `json:"api_calls"`
	SessionID      string                         `json:"session_id"`
	TurnID         string                         `json:"turn_id"`
	Model          string                         `json:"model"`
	Usage          activities.Usage               `json:"usage"`
	Messages       []openai.ChatCompletionMessage `json:"messages"`
	// PendingSteers are steers that arrived after the turn's last model
	// call: they become the session's next message.
	PendingSteers []string `json:"pending_steers,omitempty"`
	// ActiveSessionID is the session the conversation goes on in: SessionID,
	// or after a compaction its newest child.
	ActiveSessionID string `json:"active_session_id,omitempty"`
	// Compactions counts the context compactions of this turn.
	Compactions int `json:"compactions,omitempty"`
}
