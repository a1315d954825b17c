package workflows

import "testing"

func TestSyncDue(t *testing.T) {
	t.Parallel()
	answer := "done"
	on := TurnInput{MemorySync: true}
	for _, c := range []struct {
		name string
		tmpl TurnInput
		res  ConversationResult
		want bool
	}{
		{"answered", on, ConversationResult{Completed: true, FinalResponse: &answer}, true},
		{"memory off", TurnInput{}, ConversationResult{Completed: true, FinalResponse: &answer}, false},
		{"no answer", on, ConversationResult{Completed: true}, false},
		{"failed", on, ConversationResult{Failed: true, FinalResponse: &answer}, false},
	} {
		if got := syncDue(c.tmpl, c.res); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if got := MemorySyncWorkflowID("turn/s/3"); got != "memory-sync/turn_s_3" {
		t.Errorf("MemorySyncWorkflowID: %s", got)
	}
}
