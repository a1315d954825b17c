package turnapi

import (
	"testing"
)

func TestParseChoice(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want ApprovalChoice
		err  bool
	}{
		{"once", ChoiceOnce, false},
		{"O", ChoiceOnce, false},
		{"yes", ChoiceOnce, false},
		{" Y ", ChoiceOnce, false},
		{"session", ChoiceSession, false},
		{"s", ChoiceSession, false},
		{"SESSION", ChoiceSession, false},
		{"always", ChoiceAlways, false},
		{"A", ChoiceAlways, false},
		{"deny", ChoiceDeny, false},
		{"d", ChoiceDeny, false},
		{"No", ChoiceDeny, false},
		{"n", ChoiceDeny, false},
		{"\tdeny\n", ChoiceDeny, false},
		{"", "", true},
		{"maybe", "", true},
		{"yess", "", true},
		{"once please", "", true},
	}
	for _, tt := range tests {
		got, err := ParseApprovalChoice(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseChoice(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestRiskString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		r    Risk
		want string
	}{
		{RiskSafe, "safe"}, {RiskDangerous, "dangerous"}, {RiskBlocked, "blocked"}, {Risk(7), "risk(7)"}, {Risk(-1), "risk(-1)"},
	}
	for _, tt := range tests {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("Risk(%d).String() = %q, want %q", int(tt.r), got, tt.want)
		}
	}
}
