package workflows

import "github.com/talaria-agent/talaria/internal/turnapi"

// ConversationResult is the typed outcome of one turn. The workflow returns
// it without Messages, and with FinalResponse clipped to a preview when the
// answer is long (FinalClipped): workflow history never carries content of
// unbounded size. Clients fill Messages and the full FinalResponse from the
// store (engine.Runtime.WaitTurn does).
type ConversationResult struct {
	FinalResponse *string `json:"final_response"`
	// FinalMessageID is the stored message holding the final answer.
	FinalMessageID int64 `json:"final_message_id,omitempty"`
	// FinalClipped: FinalResponse is only the beginning of the answer; the
	// full text is the message FinalMessageID.
	FinalClipped   bool              `json:"final_clipped,omitempty"`
	Completed      bool              `json:"completed"`
	Partial        bool              `json:"partial"`
	Interrupted    bool              `json:"interrupted"`
	Failed         bool              `json:"failed"`
	TurnExitReason StopReason        `json:"turn_exit_reason"`
	Error          *string           `json:"error"`
	APICalls       int               `json:"api_calls"`
	SessionID      string            `json:"session_id"`
	TurnID         string            `json:"turn_id"`
	Model          string            `json:"model"`
	Usage          turnapi.Usage     `json:"usage"`
	Messages       []turnapi.Message `json:"messages"`
	// PendingSteers are steers that arrived after the turn's last model
	// call: they become the session's next message.
	PendingSteers []string `json:"pending_steers,omitempty"`
	// ActiveSessionID is the session the conversation goes on in: SessionID,
	// or after a compaction its newest child.
	ActiveSessionID string `json:"active_session_id,omitempty"`
	// Compactions counts the context compactions of this turn.
	Compactions int `json:"compactions,omitempty"`
	// Late marks a second end signal of a turn (SignalTurnEnded): only
	// PendingSteers, the steers that reached it while its end was
	// reported.
	Late bool `json:"late,omitempty"`
}
