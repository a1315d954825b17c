package activities

import (
	"strings"
	"testing"
)

// TestCommandGate: a program's terminal commands run when safe; a
// dangerous one only when the turn and the worker both run without
// approvals; a blocked one never.
func TestCommandGate(t *testing.T) {
	cases := []struct {
		policy, mode, command string
		refused               string // "" runs
	}{
		{"ask", "ask", "ls -la", ""},
		{"ask", "ask", "rm -rf ./build", "needs a person's approval"},
		{"ask", "off", "rm -rf ./build", "needs a person's approval"},
		{"off", "ask", "rm -rf ./build", "needs a person's approval"},
		{"off", "deny", "rm -rf ./build", "needs a person's approval"},
		{"off", "off", "rm -rf ./build", ""},
		{"", "off", "rm -rf ./build", "needs a person's approval"},
		{"off", "off", "rm -rf /", "never run"},
		{"deny", "deny", "echo hi", ""},
	}
	for _, c := range cases {
		a := &Activities{ApprovalPolicy: c.policy}
		err := a.commandGate(c.mode)(c.command, "")
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("policy %q, mode %q: %q refused: %v", c.policy, c.mode, c.command, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("policy %q, mode %q: %q: %v, want a refusal with %q", c.policy, c.mode, c.command, err, c.refused)
		}
	}
	if allowedTool(nil) != nil || !allowedTool([]string{"a"})("a") || allowedTool([]string{"a"})("b") {
		t.Error("allowedTool does not follow the turn's list")
	}
}
