package workflows

import (
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
