package workflows

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TestGoalBudgetSpent: each budget stops a goal once spent, saying which.
func TestGoalBudgetSpent(t *testing.T) {
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		b     GoalBudget
		p     GoalProgress
		now   time.Time
		spent string
	}{
		{GoalBudget{}, GoalProgress{StartedAt: start, Iterations: 10000}, start.Add(1000 * time.Hour), ""},
		{GoalBudget{MaxIterations: 7}, GoalProgress{StartedAt: start, Iterations: 5}, start, ""},
		{GoalBudget{MaxIterations: 7}, GoalProgress{StartedAt: start, Iterations: 6}, start, "used 6 of its 7 model calls"},
		{GoalBudget{MaxDuration: time.Hour}, GoalProgress{StartedAt: start}, start.Add(59 * time.Minute), ""},
		{GoalBudget{MaxDuration: time.Hour}, GoalProgress{StartedAt: start}, start.Add(time.Hour), "--max-hours"},
		{GoalBudget{MaxCost: 1}, GoalProgress{StartedAt: start, CostUSD: 0.99}, start, ""},
		{GoalBudget{MaxCost: 1}, GoalProgress{StartedAt: start, CostUSD: 1.5}, start, "spent $1.5000"},
	} {
		got := goalBudgetSpent(tt.b, tt.p, tt.now)
		if (tt.spent == "") != (got == "") || !strings.Contains(got, tt.spent) {
			t.Errorf("%+v %+v: %q, want %q", tt.b, tt.p, got, tt.spent)
		}
	}
	if c := goalCost(GoalBudget{InputPrice: 2, OutputPrice: 10}, turnapi.Usage{PromptTokens: 500_000, CompletionTokens: 100_000}); c != 2 {
		t.Errorf("cost %v, want 2", c)
	}
	// Calls the activities priced (at each call's own model) count as priced.
	if c := goalCost(GoalBudget{InputPrice: 2, OutputPrice: 10}, turnapi.Usage{PromptTokens: 500_000, CompletionTokens: 100_000, CostUSD: 0.25}); c != 0.25 {
		t.Errorf("cost %v, want the recorded 0.25", c)
	}
}

// TestGoalTurn: the first turn carries the goal, the next ones ask to go
// on; the total budget cuts a turn's, keeping one call for its summary.
func TestGoalTurn(t *testing.T) {
	in := GoalInput{SessionID: "g", Goal: "ship it", Turn: TurnInput{MaxIterations: 5, Resume: &TurnCarry{}}, Budget: GoalBudget{MaxIterations: 9}}
	first := goalTurn(in, GoalProgress{})
	if first.SessionID != "g" || first.TurnNumber != 1 || first.UserMessage != "ship it" || first.MaxIterations != 5 || first.Resume != nil {
		t.Errorf("first turn: %+v", first)
	}
	next := goalTurn(in, GoalProgress{TurnCount: 1, Iterations: 6})
	if next.TurnNumber != 2 || !strings.Contains(next.UserMessage, "continuation 1") || !strings.Contains(next.UserMessage, "ship it") || next.MaxIterations != 2 {
		t.Errorf("second turn: %+v", next)
	}
	var turns []GoalTurn
	for i := range goalTurnsKept + 5 {
		turns = keepTurns(turns, GoalTurn{Number: i + 1})
	}
	if len(turns) != goalTurnsKept || turns[0].Number != 6 {
		t.Errorf("kept %d turns from %d", len(turns), turns[0].Number)
	}
}

// TestAfterGoalTurn: which turns end a goal, and how.
func TestAfterGoalTurn(t *testing.T) {
	msg := "boom"
	done := ConversationResult{Completed: true, TurnExitReason: StopTextResponse, FinalMessageID: 3}
	spent := ConversationResult{TurnExitReason: StopMaxIterations, FinalMessageID: 4}
	for _, tt := range []struct {
		name    string
		once    bool
		res     ConversationResult
		err     error
		timeUp  bool
		stopped string
		outcome GoalOutcome
		why     string
		over    bool
	}{
		{"a goal's completed turn goes to the check", false, done, nil, false, "", "", "", false},
		{"a goal's spent turn goes to the check", false, spent, nil, false, "", "", "", false},
		{"the turn's workflow failed", false, ConversationResult{}, errors.New("lost"), false, "", GoalFailed, "turn 2 failed: lost", true},
		{"the turn failed", false, ConversationResult{Failed: true, Error: &msg}, nil, false, "", GoalFailed, "turn 2 failed: boom", true},
		{"stopped", false, ConversationResult{Interrupted: true}, nil, false, "by hand", GoalInterrupted, "by hand", true},
		{"stopped as the time ran out", false, ConversationResult{Interrupted: true}, nil, true, "by hand", GoalInterrupted, "by hand", true},
		{"the time ran out", false, ConversationResult{Interrupted: true}, nil, true, "", GoalBudgetSpent, "--max-hours", true},
		{"a task done", true, done, nil, false, "", GoalDone, "the task is done", true},
		{"a task's budget spent, with its summary", true, spent, nil, false, "", GoalDone, "its answer is the summary", true},
		{"a task without an answer", true, ConversationResult{TurnExitReason: StopBudgetExhausted}, nil, false, "", GoalFailed, "ended budget_exhausted", true},
	} {
		o, why, over := afterGoalTurn(tt.once, 2, tt.res, tt.err, tt.timeUp, tt.stopped)
		if o != tt.outcome || over != tt.over || !strings.Contains(why, tt.why) {
			t.Errorf("%s: %q %q %v, want %q %q %v", tt.name, o, why, over, tt.outcome, tt.why, tt.over)
		}
	}
}
