package approval

import "testing"

// TestAssessMultiline holds commands that span lines, which the one-line
// table cannot express.
func TestAssessMultiline(t *testing.T) {
	tests := []struct {
		cmd  string
		risk Risk
	}{
		{"echo hi # \\\nrm -rf /", Dangerous},
		{"echo hi # \\\nrm -rf ~", Dangerous},
		{"echo hi # \\\r\nrm -rf ~", Dangerous},
		{"# note \\\nrm -rf ~", Dangerous},
		{"echo hi # note\nls", Safe},
		{"echo a \\\n  b # note", Safe},
		{"echo 'a # \\\nb'", Safe},
	}
	for _, tt := range tests {
		if got := Assess(tt.cmd); got.Risk != tt.risk {
			t.Errorf("Assess(%q) = %v %s (%s), want %v", tt.cmd, got.Risk, got.Rule, got.Reason, tt.risk)
		}
	}
}
