package workflows

import (
	"fmt"
	"time"

	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TurnState is everything the loop tracks, in one struct made fresh for
// every turn, so no counter of a previous turn leaks into the next.
type TurnState struct {
	Budget IterationBudget
	// Calls is the number of model calls made (api_calls).
	Calls int
	Usage turnapi.Usage
	// Provider indexes the provider in use (0: primary); Providers counts them.
	Provider, Providers int
	// Model is the model the turn's last reply came from (empty: none
	// reported; the turn's input names it).
	Model string `json:",omitempty"`

	// Recovery counters, bounded by Limits.
	InvalidToolRetries   int
	InvalidJSONRetries   int
	EmptyRetries         int
	PrefillRetries       int
	LengthContinuations  int
	TruncatedToolRetries int
	// PostToolNudged: the one nudge after an empty reply to tool results was used.
	PostToolNudged bool
	// GraceCall: the budget ran out and the one tool-less call was made.
	GraceCall bool
	// Interrupted: the user asked the turn to stop.
	Interrupted bool
	// Steers are user messages that arrived while the turn ran, not yet
	// delivered to the model.
	Steers []string

	// Guardrail is the built-in controller's memory of this turn's calls.
	Guardrail loop.GuardrailState
	// AfterTools: the conversation currently ends with tool results.
	AfterTools bool
	// HousekeepingText is a reply whose text came with housekeeping-only tool
	// calls (todo, memory): the answer to fall back on if the model then
	// replies with nothing.
	HousekeepingText int64
	// Parts are hidden replies cut off by the output limit, being continued.
	Parts []int64
	// Next shapes the next model call (request-only additions).
	Next NextCall

	// Context is the conversation's size and compactions.
	Context ContextState

	// Recent are the last few things the turn did, for progress queries.
	Recent []string

	// Final are the replies whose joined text is the final answer.
	Final       []int64
	CurrentTool string
	Stop        StopReason
	Err         string
}

// NextCall holds the request-only additions for the next model call.
type NextCall struct {
	Nudge        string
	PrefillFrom  int64
	MaxTokens    int
	ContinueFrom []int64
}

// NewTurnState returns the state at the start of a turn.
func NewTurnState(maxIterations int) TurnState {
	return TurnState{Budget: NewIterationBudget(maxIterations)}
}

// nextCall numbers the next model call.
func (s *TurnState) nextCall() int {
	s.Calls++
	return s.Calls
}

// stop ends the loop with reason. err says why; when empty, a message the
// decision that stopped the turn left in Err is kept.
func (s *TurnState) stop(r StopReason, err string) {
	s.Stop = r
	if err != "" {
		s.Err = err
	}
}

// stopIfInterrupted ends the loop when the user asked the turn to stop; it
// reports whether it did.
func (s *TurnState) stopIfInterrupted() bool {
	if !s.Interrupted {
		return false
	}
	s.stop(StopInterrupted, "")
	return true
}

// maxRecent bounds TurnState.Recent, maxNoteBytes each of its notes.
const (
	maxRecent    = 10
	maxNoteBytes = 512
)

// note records a step for progress queries, keeping the last few.
func (s *TurnState) note(format string, args ...any) {
	// A note may name what the model sent (tool names): it is cut, as
	// the state travels in history when the turn continues as new.
	s.Recent = append(s.Recent, turnapi.BoundText(fmt.Sprintf(format, args...), maxNoteBytes))
	if len(s.Recent) > maxRecent {
		s.Recent = append([]string(nil), s.Recent[len(s.Recent)-maxRecent:]...)
	}
}

// ContextState tracks the conversation's size and its compactions.
type ContextState struct {
	// SessionID is the session the conversation goes on in: the turn's own,
	// or after a compaction its newest child. Empty: the turn's own.
	SessionID string `json:",omitempty"`
	// Tokens is the conversation's size as last reported or estimated.
	Tokens int `json:",omitempty"`
	// Compactions made in this turn.
	Compactions int `json:",omitempty"`
	// OverflowRetries counts compactions for the current refused call.
	OverflowRetries int `json:",omitempty"`
	// StuckAt: a compaction left the context at this size, above the
	// threshold; the next preflight waits until it grows by a quarter.
	StuckAt int `json:",omitempty"`
	// JustCompacted: no model call has reported the size since the last
	// compaction.
	JustCompacted bool `json:",omitempty"`
	// SummaryCooldownUntil: the summariser failed; until then compactions
	// use the static summary.
	SummaryCooldownUntil time.Time `json:",omitempty"`
}

// session is the session the conversation goes on in.
func (c ContextState) session(turnSession string) string {
	if c.SessionID != "" {
		return c.SessionID
	}
	return turnSession
}
