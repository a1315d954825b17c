package engine

import (
	"slices"
	"testing"

	"github.com/talaria-agent/talaria/workflows"
)

// TestTurnsEnded: each ended turn is reported once, in order, whichever
// moment the progress is read at, including the one between a turn's end
// and its check (TurnCount already counts it, Turns do not hold it yet).
func TestTurnsEnded(t *testing.T) {
	t.Parallel()
	turns := func(ns ...int) []workflows.GoalTurn {
		var out []workflows.GoalTurn
		for _, n := range ns {
			out = append(out, workflows.GoalTurn{Number: n})
		}
		return out
	}
	for _, tt := range []struct {
		name     string
		p        workflows.GoalProgress
		seen     int
		want     []int
		wantSeen int
	}{
		{"nothing yet", workflows.GoalProgress{}, 0, nil, 0},
		{"the first turn", workflows.GoalProgress{TurnCount: 1, Turns: turns(1)}, 0, []int{1}, 1},
		{"first read while turn 2 is checked", workflows.GoalProgress{TurnCount: 2, Turns: turns(1)}, 0, []int{1}, 1},
		{"two at once", workflows.GoalProgress{TurnCount: 2, Turns: turns(1, 2)}, 0, []int{1, 2}, 2},
		{"seen before", workflows.GoalProgress{TurnCount: 3, Turns: turns(1, 2, 3)}, 2, []int{3}, 3},
		{"older turns dropped", workflows.GoalProgress{TurnCount: 40, Turns: turns(31, 32)}, 0, []int{31, 32}, 32},
		{"nothing new", workflows.GoalProgress{TurnCount: 2, Turns: turns(1, 2)}, 2, nil, 2},
	} {
		got, seen := turnsEnded(tt.p, tt.seen)
		var nums []int
		for _, t := range got {
			nums = append(nums, t.Number)
		}
		if !slices.Equal(nums, tt.want) || seen != tt.wantSeen {
			t.Errorf("%s: turnsEnded = %v, %d; want %v, %d", tt.name, nums, seen, tt.want, tt.wantSeen)
		}
	}
}
