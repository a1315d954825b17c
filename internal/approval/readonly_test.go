package approval

import (
	"testing"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TestAllowlistOutsideTheSandbox: without a sandbox, what the table says is
// Dangerous or Blocked stays so, and of its Safe commands only those known
// to only read stay Safe.
func TestAllowlistOutsideTheSandbox(t *testing.T) {
	t.Parallel()
	cases := readTable(t, "testdata/commands.txt")
	safe, asks := 0, 0
	for _, tc := range cases {
		got := AssessIn(tc.cmd, Where{})
		if got.Risk < tc.risk {
			t.Errorf("line %d: AssessIn(%q, outside) = %v, weaker than the table's %v", tc.line, tc.cmd, got.Risk, tc.risk)
		}
		if tc.risk == turnapi.RiskSafe {
			if got.Risk == turnapi.RiskSafe {
				safe++
			} else {
				asks++
			}
		}
	}
	t.Logf("of the table's safe commands, %d stay safe outside the sandbox and %d ask", safe, asks)
}

func TestReadOnlyAllowlist(t *testing.T) {
	t.Parallel()
	outside := Where{}
	for _, tc := range []struct {
		command string
		safe    bool
	}{
		{"ls -la", true},
		{"git status && git diff --stat && git log --oneline -5", true},
		{"grep -rn TODO . | sort | uniq -c | head", true},
		{"cat README.md", true},
		{"find . -name '*.go' | wc -l", true},
		{"sed -n '1,20p' main.go", true},
		{"echo hello > /dev/null", true},
		{"sh -c 'ls -l'", true},
		{"tar -tzf x.tgz", true},
		{"go version", true},
		{"git branch -a", true},
		{"sleep 4; talaria approve SESSION --always", false},
		{"talaria approve s1", false},
		{"/usr/local/bin/talaria sessions list", false},
		{"curl -s http://127.0.0.1:8642/v1/runs", false},
		{"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 7233))'", false},
		{"bash x.sh", false},
		{"echo x > notes.txt", false},
		{"sed -i s/a/b/ f", false},
		{"sort -o out.txt in.txt", false},
		{"find . -name x -delete", false},
		{"git -c core.pager=sh log", false},
		{"git push", false},
		{"git branch -D main", false},
		{"git config user.name x", false},
		{"tar -xf x.tar", false},
		{"make", false},
		{"go build ./...", false},
		{"sudo ls", false},
		{"ssh host ls", false},
		{"awk '{print > \"f\"}' x", false},
		{"X=talaria; $X approve s", false},
		{"cp a b", false},
	} {
		got := AssessIn(tc.command, outside)
		if (got.Risk == turnapi.RiskSafe) != tc.safe {
			t.Errorf("AssessIn(%q, outside) = %v %s (%s), want safe %v", tc.command, got.Risk, got.Rule, got.Reason, tc.safe)
		}
	}
}
