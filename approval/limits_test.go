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
		{"too deeply nested backticks", nest(maxDepth-2, nest(4, "ls", func(s string) string {
			return "echo `" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "`", "\\`") + "`"
		}), func(s string) string { return "echo $(" + s + ")" }), Dangerous, RuleTooComplex},
		{"nested backticks", nest(4, "rm -rf /", func(s string) string {
			return "echo `" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "`", "\\`") + "`"
		}), Blocked, RuleRootDelete},
		{"sh -c of substitutions", nest(20, "rm -rf ./x", func(s string) string { return `sh -c "$(` + s + `)"` }), Dangerous, RuleRecursiveDelete},
		{"eval of substitutions", nest(maxDepth+2, "ls", func(s string) string { return `eval $(` + s + `)` }), Dangerous, RuleTooComplex},
		{"echo piped to many shells", nest(6, "ls", func(s string) string {
			return "echo " + strings.Repeat("x", 1) + " '" + strings.ReplaceAll(s, "'", `'\''`) + "' | sh | sh | sh | sh"
		}), Safe, ""},
		{"long command", strings.Repeat("echo a | ", 20000) + "cat", Safe, ""},
		{"many parens", strings.Repeat("(", 50000) + "rm -rf /" + strings.Repeat(")", 50000), Blocked, RuleRootDelete},
		{"many functions", strings.Repeat("a(){ ", 20000) + "b|b", Safe, ""},
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
