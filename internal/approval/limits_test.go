package approval

import (
	"fmt"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// nest wraps inner n times in the shell text made by wrap.
func nest(n int, inner string, wrap func(string) string) string {
	for i := 0; i < n; i++ {
		inner = wrap(inner)
	}
	return inner
}

// limitCase is a command at or past one of Assess's bounds, and its verdict.
type limitCase struct {
	name string
	cmd  string
	risk turnapi.Risk
	rule string
}

// limitCases are commands built to make a reader of shell text slow or deep:
// TestAssessLimits checks their verdicts and BenchmarkAssessLimits measures
// them.
func limitCases() []limitCase {
	return []limitCase{
		{"nested substitutions", nest(10, "rm -rf /", func(s string) string { return "echo $(" + s + ")" }), turnapi.RiskBlocked, RuleRootDelete},
		{"too deeply nested substitutions", nest(maxDepth+2, "ls", func(s string) string { return "echo $(" + s + ")" }), turnapi.RiskDangerous, RuleTooComplex},
		{"too deep still finds blocked", "rm -rf / ; " + nest(maxDepth+2, "ls", func(s string) string { return "echo $(" + s + ")" }), turnapi.RiskBlocked, RuleRootDelete},
		{"nested backticks", nest(2, "rm -rf /", func(s string) string {
			return "echo `" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "`", "\\`") + "`"
		}), turnapi.RiskBlocked, RuleRootDelete},
		// The parser does not read backticks nested four deep: never Safe.
		{"deeply nested backticks", nest(4, "ls", func(s string) string {
			return "echo `" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "`", "\\`") + "`"
		}), turnapi.RiskDangerous, RuleUnparsable},
		{"sh -c of substitutions", nest(20, "rm -rf ./x", func(s string) string { return `sh -c "$(` + s + `)"` }), turnapi.RiskDangerous, RuleRecursiveDelete},
		{"eval of substitutions", nest(maxDepth+2, "ls", func(s string) string { return `eval $(` + s + `)` }), turnapi.RiskDangerous, RuleDynamicCommand},
		{"echo piped to many shells", nest(6, "ls", func(s string) string {
			return "echo " + strings.Repeat("x", 1) + " '" + strings.ReplaceAll(s, "'", `'\''`) + "' | sh | sh | sh | sh"
		}), turnapi.RiskDangerous, RuleDynamicCommand},
		{"long command", strings.Repeat("echo a | ", 20000) + "cat", turnapi.RiskSafe, ""},
		{"many parens", strings.Repeat("(", 50000) + "rm -rf /" + strings.Repeat(")", 50000), turnapi.RiskDangerous, RuleTooComplex},
		{"many subshells", strings.Repeat("( ", 20000) + "rm -rf /" + strings.Repeat(")", 20000), turnapi.RiskDangerous, RuleTooComplex},
		{"nested subshells", strings.Repeat("( ", 500) + "rm -rf /" + strings.Repeat(")", 500), turnapi.RiskBlocked, RuleRootDelete},
		{"many functions", strings.Repeat("a(){ ", 20000) + "b|b", turnapi.RiskDangerous, RuleUnparsable},
		{"many nested functions", strings.Repeat("a(){ ", 500) + "b|b" + strings.Repeat("; }", 500), turnapi.RiskSafe, ""},
		{"many assignments", strings.Repeat("X=$X$X$X; ", 200) + "$X", turnapi.RiskDangerous, RuleDynamicCommand},
		{"large brace expansion", "{1..100}{1..100}{1..100}{1..100}", turnapi.RiskDangerous, RuleDynamicCommand},
		{"many wrappers", strings.Repeat("sudo ", 5000) + "ls", turnapi.RiskDangerous, RuleTooComplex},
		{"some wrappers", strings.Repeat("sudo ", 50) + "rm -rf ./x", turnapi.RiskDangerous, RuleRecursiveDelete},
		{"many evals", strings.Repeat("eval ", 30) + "ls", turnapi.RiskDangerous, RuleTooComplex},
	}
}

// TestAssessLimits checks the verdicts; how long they take is
// BenchmarkAssessLimits' and BenchmarkAssessScaling's to show.
func TestAssessLimits(t *testing.T) {
	t.Parallel()
	for _, tt := range limitCases() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Assess(tt.cmd)
			if got.Risk != tt.risk || got.Rule != tt.rule {
				t.Errorf("Assess = %+v, want %v %q", got, tt.risk, tt.rule)
			}
		})
	}
}

func BenchmarkAssessLimits(b *testing.B) {
	for _, tt := range limitCases() {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				Assess(tt.cmd)
			}
		})
	}
}

// BenchmarkAssessScaling runs Assess on commands of n and 10n parts: a
// time per op ten times as long (not a hundred) shows the reading is linear
// in the command's length.
func BenchmarkAssessScaling(b *testing.B) {
	shapes := []struct {
		name string
		cmd  func(n int) string
	}{
		{"pipeline", func(n int) string { return strings.Repeat("echo a | ", n) + "cat" }},
		{"sequence", func(n int) string { return strings.Repeat("ls ./x; ", n) + "ls" }},
		{"functions", func(n int) string { return strings.Repeat("a(){ ", n) + "b|b" }},
	}
	for _, sh := range shapes {
		for _, n := range []int{2000, 20000} {
			cmd := sh.cmd(n)
			b.Run(fmt.Sprintf("%s/%d", sh.name, n), func(b *testing.B) {
				for b.Loop() {
					Assess(cmd)
				}
			})
		}
	}
}
