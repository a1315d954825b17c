package approval

import (
	"strings"
	"testing"
	"time"
)

// nest wraps inner n times in the shell text made by wrap.
func nest(n int, inner string, wrap func(string) string) string {
	for i := 0; i < n; i++ {
		inner = wrap(inner)
	}
	return inner
}

func TestAssessLimits(t *testing.T) {
	tests := []struct {
		name string
		cmd  string
		risk Risk
		rule string
	}{
		{"nested substitutions", nest(10, "rm -rf /", func(s string) string { return "echo $(" + s + ")" }), Blocked, RuleRootDelete},
		{"too deeply nested substitutions", nest(maxDepth+2, "ls", func(s string) string { return "echo $(" + s + ")" }), Dangerous, RuleTooComplex},
		{"too deep still finds blocked", "rm -rf / ; " + nest(maxDepth+2, "ls", func(s string) string { return "echo $(" + s + ")" }), Blocked, RuleRootDelete},
		{"nested backticks", nest(2, "rm -rf /", func(s string) string {
			return "echo `" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "`", "\\`") + "`"
		}), Blocked, RuleRootDelete},
		// The parser does not read backticks nested four deep: never Safe.
		{"deeply nested backticks", nest(4, "ls", func(s string) string {
			return "echo `" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "`", "\\`") + "`"
		}), Dangerous, RuleUnparsable},
		{"sh -c of substitutions", nest(20, "rm -rf ./x", func(s string) string { return `sh -c "$(` + s + `)"` }), Dangerous, RuleRecursiveDelete},
		{"eval of substitutions", nest(maxDepth+2, "ls", func(s string) string { return `eval $(` + s + `)` }), Dangerous, RuleDynamicCommand},
		{"echo piped to many shells", nest(6, "ls", func(s string) string {
			return "echo " + strings.Repeat("x", 1) + " '" + strings.ReplaceAll(s, "'", `'\''`) + "' | sh | sh | sh | sh"
		}), Dangerous, RuleDynamicCommand},
		{"long command", strings.Repeat("echo a | ", 20000) + "cat", Safe, ""},
		{"many parens", strings.Repeat("(", 50000) + "rm -rf /" + strings.Repeat(")", 50000), Dangerous, RuleTooComplex},
		{"many subshells", strings.Repeat("( ", 20000) + "rm -rf /" + strings.Repeat(")", 20000), Dangerous, RuleTooComplex},
		{"nested subshells", strings.Repeat("( ", 500) + "rm -rf /" + strings.Repeat(")", 500), Blocked, RuleRootDelete},
		{"many functions", strings.Repeat("a(){ ", 20000) + "b|b", Dangerous, RuleUnparsable},
		{"many nested functions", strings.Repeat("a(){ ", 500) + "b|b" + strings.Repeat("; }", 500), Safe, ""},
		{"many assignments", strings.Repeat("X=$X$X$X; ", 200) + "$X", Dangerous, RuleDynamicCommand},
		{"large brace expansion", "{1..100}{1..100}{1..100}{1..100}", Dangerous, RuleDynamicCommand},
		{"many wrappers", strings.Repeat("sudo ", 5000) + "ls", Dangerous, RuleTooComplex},
		{"some wrappers", strings.Repeat("sudo ", 50) + "rm -rf ./x", Dangerous, RuleRecursiveDelete},
		{"many evals", strings.Repeat("eval ", 30) + "ls", Dangerous, RuleTooComplex},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			got := Assess(tt.cmd)
			if got.Risk != tt.risk || got.Rule != tt.rule {
				t.Errorf("Assess = %+v, want %v %q", got, tt.risk, tt.rule)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Assess took %v", d)
			}
		})
	}
}
