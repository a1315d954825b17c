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
	cases := readTable(t, "testdata/commands.txt")
	if len(cases) < 300 {
		t.Fatalf("only %d commands in the table", len(cases))
	}
	counts := map[turnapi.Risk]int{}
	for _, tc := range cases {
		counts[tc.risk]++
		got := Assess(tc.cmd)
		if got.Risk != tc.risk {
			t.Errorf("line %d: Assess(%q) = %v %s (%s), want %v", tc.line, tc.cmd, got.Risk, got.Rule, got.Reason, tc.risk)
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
