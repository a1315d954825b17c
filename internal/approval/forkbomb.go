package approval

import (
	"mvdan.cc/sh/v3/syntax"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// forkBomb walks the whole tree once. It reports a function that calls itself
// twice or more in its own body (":(){ :|:& };:" whatever the name), the
// shape of a fork bomb; the functions being defined are kept on a stack.
func (a *assessor) forkBomb(f *syntax.File) {
	type frame struct {
		node  syntax.Node
		name  string
		calls int
	}
	var stack []frame
	open := map[string][]int{} // function name → its frames on the stack
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if top.name != "" {
				ix := open[top.name]
				open[top.name] = ix[:len(ix)-1]
				if top.calls >= 2 {
					found = true
				}
			}
			return true
		}
		fr := frame{node: n}
		switch n := n.(type) {
		case *syntax.FuncDecl:
			if n.Name != nil {
				fr.name = n.Name.Value
				open[fr.name] = append(open[fr.name], len(stack))
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				if ix := open[decode(n.Args[0]).s]; len(ix) > 0 {
					stack[ix[len(ix)-1]].calls++
				}
			}
		}
		stack = append(stack, fr)
		return true
	})
	if found {
		a.report(turnapi.RiskBlocked, RuleForkBomb, "fork bomb (a function that runs itself more than once)", "")
	}
}
