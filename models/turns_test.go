package models

import (
	"reflect"
	"testing"
	"time"
)

func TestUpsertTurn(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		started := time.Date(2025, 3, 1, 12, 0, 0, 123456000, time.UTC)
		running := Turn{ID: "wf-2", SessionID: "s", Number: 2, Model: "m", Status: "running", StartedAt: started}
		ended := started.Add(90 * time.Second)
		completed := running
		completed.Status, completed.ExitReason, completed.FinalResponse = "completed", "final_answer", "the answer"
		completed.APICalls, completed.PromptTokens, completed.CompletionTokens, completed.TotalTokens = 3, 1200, 300, 1500
		completed.EndedAt = &ended
		failed := Turn{ID: "wf-1", SessionID: "s", Number: 1, Status: "failed", Error: "provider: 500", StartedAt: started.Add(-time.Hour)}

		steps := []struct {
			name  string
			write Turn
		}{
			{"insert running", running},
			{"update to completed", completed},
			{"insert another", failed},
		}
		for _, step := range steps {
			if err := s.UpsertTurn(t.Context(), step.write); err != nil {
				t.Fatalf("%s: UpsertTurn: %v", step.name, err)
			}
			got, err := s.Turn(t.Context(), step.write.ID)
			if err != nil {
				t.Fatalf("%s: Turn: %v", step.name, err)
			}
			if !turnsEqual(*got, step.write) {
				t.Errorf("%s: read back %+v\nwant %+v", step.name, *got, step.write)
			}
		}

		turns, err := s.Turns(t.Context(), "s")
		if err != nil {
			t.Fatalf("Turns: %v", err)
		}
		if len(turns) != 2 || turns[0].ID != "wf-1" || turns[1].ID != "wf-2" {
			t.Errorf("Turns = %+v, want wf-1 then wf-2", turns)
		}
	})
}

// turnsEqual compares turns, times by instant rather than location.
func turnsEqual(a, b Turn) bool {
	if !a.StartedAt.Equal(b.StartedAt) || (a.EndedAt == nil) != (b.EndedAt == nil) ||
		(a.EndedAt != nil && !a.EndedAt.Equal(*b.EndedAt)) {
		return false
	}
	a.StartedAt, b.StartedAt, a.EndedAt, b.EndedAt = time.Time{}, time.Time{}, nil, nil
	return reflect.DeepEqual(a, b)
}
