package workflows

import "github.com/talaria-agent/talaria/activities"

// TurnState is everything the loop tracks, in one struct reset per turn.
type TurnState struct {
	Budget IterationBudget
	// Calls is the number of model calls made (api_calls).
	Calls int
	Usage activities.Usage
	// EmptyRetries counts consecutive empty replies answered with a nudge.
	EmptyRetries int
	// Nudge is a request-only user message for the next call.
	Nudge string
	// FinalMessageID is the assistant message holding the final text.
	FinalMessageID int64
	// CurrentTool names the tool batch running, for progress queries.
	CurrentTool string
	Stop        StopReason
	Err         string
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

// stop ends the loop with reason.
func (s *TurnState) stop(r StopReason, err string) {
	s.Stop = r
	s.Err = err
}
