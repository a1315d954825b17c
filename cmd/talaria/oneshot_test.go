package main

import (
	"context"
	"errors"
	"testing"

	"github.com/talaria-agent/talaria/workflows"
)

// TestFailedResult: the result --json prints for a turn that could not be
// run or waited for carries the turn id when known, a plain error, and
// says interrupted after Ctrl-C pressed twice.
func TestFailedResult(t *testing.T) {
	tests := []struct {
		name        string
		err         error
		turnID      string
		interrupted bool
		want        workflows.ConversationResult
		wantErr     string
	}{
		{"failed", errors.New("turn s/t1: boom (type: Fatal, retryable: false)"), "s/t1", false,
			workflows.ConversationResult{Failed: true, TurnExitReason: workflows.StopError}, "turn s/t1: boom"},
		{"interrupted", context.Canceled, "", true,
			workflows.ConversationResult{Interrupted: true, TurnExitReason: workflows.StopInterrupted},
			"interrupted: stopped waiting for the turn (Ctrl-C twice)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := failedResult("s", tt.turnID, "m", tt.err, tt.interrupted)
			if got.Failed != tt.want.Failed || got.Interrupted != tt.want.Interrupted || got.TurnExitReason != tt.want.TurnExitReason ||
				got.TurnID != tt.turnID || got.SessionID != "s" || got.Model != "m" || got.Error == nil || *got.Error != tt.wantErr {
				t.Fatalf("got %+v (error %v)", got, *got.Error)
			}
		})
	}
}
