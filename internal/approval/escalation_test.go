package approval

import (
	"testing"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TestEscalationPattern: a grant to run a command outside the sandbox
// covers that command byte for byte: the same text is the same grant, and
// one whose space became a new line (a second command) or that has more
// spaces is another; a Blocked command stays Blocked.
func TestEscalationPattern(t *testing.T) {
	t.Parallel()
	dangerous := turnapi.Assessment{Risk: turnapi.RiskDangerous}
	key := func(cmd string) string { return Escalation(dangerous, cmd, "needs the network").GrantKey() }
	base := `printf '%s\n' cleanup rm -rf /home/u/x`
	for _, c := range []struct {
		name, other string
		same        bool
	}{
		{"the same command", base, true},
		{"a space made a new line", "printf '%s\\n' cleanup\nrm -rf /home/u/x", false},
		{"a space doubled", "printf '%s\\n' cleanup  rm -rf /home/u/x", false},
		{"a tab for a space", "printf '%s\\n' cleanup\trm -rf /home/u/x", false},
	} {
		if got := key(c.other) == key(base); got != c.same {
			t.Errorf("%s: same grant %v, want %v (%q, %q)", c.name, got, c.same, key(c.other), key(base))
		}
	}
	if a := Escalation(turnapi.Assessment{Risk: turnapi.RiskBlocked}, "x", "y"); a.Risk != turnapi.RiskBlocked {
		t.Errorf("a Blocked command became %v", a.Risk)
	}
}
