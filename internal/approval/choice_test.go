package approval

import "testing"

func TestParseChoice(t *testing.T) {
	tests := []struct {
		in   string
		want Choice
		err  bool
	}{
		{"once", Once, false},
		{"O", Once, false},
		{"yes", Once, false},
		{" Y ", Once, false},
		{"session", Session, false},
		{"s", Session, false},
		{"SESSION", Session, false},
		{"always", Always, false},
		{"A", Always, false},
		{"deny", Deny, false},
		{"d", Deny, false},
		{"No", Deny, false},
		{"n", Deny, false},
		{"\tdeny\n", Deny, false},
		{"", "", true},
		{"maybe", "", true},
		{"yess", "", true},
		{"once please", "", true},
	}
	for _, tt := range tests {
		got, err := ParseChoice(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseChoice(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestRiskString(t *testing.T) {
	tests := []struct {
		r    Risk
		want string
	}{
		{Safe, "safe"}, {Dangerous, "dangerous"}, {Blocked, "blocked"}, {Risk(7), "risk(7)"}, {Risk(-1), "risk(-1)"},
	}
	for _, tt := range tests {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("Risk(%d).String() = %q, want %q", int(tt.r), got, tt.want)
		}
	}
}
