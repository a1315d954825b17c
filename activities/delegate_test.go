package activities

import (
	"slices"
	"testing"
)

// TestDelegatedTools: a task gets its parent's tools but clarify,
// send_message and memory, and delegate_task only when its depth allows;
// never an empty list, which would mean every tool.
func TestDelegatedTools(t *testing.T) {
	parent := []string{"clarify", "delegate_task", "memory", "read_file", "send_message", "terminal"}
	for _, tt := range []struct {
		parent   []string
		delegate bool
		want     []string
	}{
		{parent, true, []string{"delegate_task", "read_file", "terminal"}},
		{parent, false, []string{"read_file", "terminal"}},
		{[]string{"clarify", "memory"}, true, []string{"todo"}},
	} {
		if got := delegatedTools(tt.parent, tt.delegate); !slices.Equal(got, tt.want) {
			t.Errorf("delegatedTools(%v, %v) = %v, want %v", tt.parent, tt.delegate, got, tt.want)
		}
	}
}
