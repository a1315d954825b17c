package approval

import (
	"testing"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TestAssessMultiline holds commands that span lines, which the one-line
// table cannot express.
func TestAssessMultiline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd  string
		risk turnapi.Risk
	}{
		{"echo hi # \\\nrm -rf /", turnapi.RiskDangerous},
		{"echo hi # \\\nrm -rf ~", turnapi.RiskDangerous},
		{"echo hi # \\\r\nrm -rf ~", turnapi.RiskDangerous},
		{"# note \\\nrm -rf ~", turnapi.RiskDangerous},
		{"echo hi # note\nls", turnapi.RiskSafe},
		{"echo a \\\n  b # note", turnapi.RiskSafe},
		{"echo 'a # \\\nb'", turnapi.RiskSafe},
	}
	for _, tt := range tests {
		if got := outside(tt.cmd); got.Risk != tt.risk {
			t.Errorf("outside(%q) = %v %s (%s), want %v", tt.cmd, got.Risk, got.Rule, got.Reason, tt.risk)
		}
	}
}
