package approval

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// tableCase is one line of testdata/commands.txt.
type tableCase struct {
	line int
	risk turnapi.Risk
	cmd  string
}

// readTable reads risk<TAB>command lines, skipping blank lines and
// comments.
func readTable(t *testing.T, name string) []tableCase {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	risks := map[string]turnapi.Risk{"safe": turnapi.RiskSafe, "dangerous": turnapi.RiskDangerous, "blocked": turnapi.RiskBlocked}
	var out []tableCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		risk, cmd, ok := strings.Cut(line, "\t")
		r, known := risks[risk]
		if !ok || !known {
			t.Fatalf("%s:%d: want risk<TAB>command, got %q", name, n, line)
		}
		out = append(out, tableCase{line: n, risk: r, cmd: cmd})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAssessTable(t *testing.T) {
	t.Parallel()
	cases := readTable(t, "testdata/commands.txt")
	if len(cases) < 300 {
		t.Fatalf("only %d commands in the table", len(cases))
	}
	counts := map[turnapi.Risk]int{}
	sandboxed := Where{Sandboxed: true, Writable: true}
	for _, tc := range cases {
		counts[tc.risk]++
		// The table's verdicts hold where they still apply: a Blocked
		// command is Blocked everywhere; a Dangerous one asks outside the
		// sandbox (where it also asks when it does not only read); a Safe
		// one runs without asking in the sandbox.
		got := Assess(tc.cmd)
		switch tc.risk {
		case turnapi.RiskBlocked:
			if got.Risk != tc.risk || AssessIn(tc.cmd, sandboxed).Risk != tc.risk {
				t.Errorf("line %d: Assess(%q) = %v %s (%s), want blocked in and out of the sandbox", tc.line, tc.cmd, got.Risk, got.Rule, got.Reason)
			}
			continue
		case turnapi.RiskDangerous:
			got = AssessIn(tc.cmd, Where{})
			if got.Risk < tc.risk {
				t.Errorf("line %d: AssessIn(%q, outside) = %v %s (%s), want dangerous", tc.line, tc.cmd, got.Risk, got.Rule, got.Reason)
			}
		case turnapi.RiskSafe:
			if in := AssessIn(tc.cmd, sandboxed); in.Risk != tc.risk {
				t.Errorf("line %d: AssessIn(%q, sandboxed) = %v %s (%s), want safe", tc.line, tc.cmd, in.Risk, in.Rule, in.Reason)
			}
		}
		if got.Risk == turnapi.RiskDangerous && got.Pattern == "" {
			t.Errorf("line %d: Assess(%q) is dangerous without a pattern", tc.line, tc.cmd)
		}
		if got.Risk != turnapi.RiskDangerous && got.Pattern != "" {
			t.Errorf("line %d: Assess(%q) = %v with pattern %q", tc.line, tc.cmd, got.Risk, got.Pattern)
		}
	}
	t.Logf("%d commands: %d safe, %d dangerous, %d blocked", len(cases), counts[turnapi.RiskSafe], counts[turnapi.RiskDangerous], counts[turnapi.RiskBlocked])
}
