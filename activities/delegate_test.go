package activities

import (
	"slices"
	"strings"
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

// TestParseVerdict: the check's answer is read from JSON or a bare word;
// anything else is continue, saying so.
func TestParseVerdict(t *testing.T) {
	for _, tt := range []struct{ text, verdict, reason string }{
		{`{"verdict": "done", "reason": "all tests pass"}`, "done", "all tests pass"},
		{"Sure.\n```json\n{\"verdict\":\"BLOCKED\",\"reason\":\"needs a key\"}\n```", "blocked", "needs a key"},
		{"continue", "continue", ""},
		{"Done.", "done", ""},
		{`{"verdict": "maybe"}`, "continue", "could not be read"},
		{"I think we are close", "continue", "could not be read"},
	} {
		got := ParseVerdict(tt.text)
		if got.Verdict != tt.verdict || !strings.Contains(got.Reason, tt.reason) {
			t.Errorf("ParseVerdict(%q) = %+v, want %s with %q", tt.text, got, tt.verdict, tt.reason)
		}
	}
}
