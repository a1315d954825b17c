package approval

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Bash evaluates array subscripts in the names it is given and in
// arithmetic, and a subscript may hold a command substitution:
// printf -v 'a[$(rm -rf ~)]' x runs rm. The names and arithmetic
// operands that bash evaluates are checked here as shell text.

// maxSubscriptHops bounds how many variables named in arithmetic are
// followed to their values.
const maxSubscriptHops = 8

// subscriptCode checks text bash evaluates as a name or an arithmetic
// operand: text that holds a substitution runs it; a variable name is
// followed to its known value.
func (a *assessor) subscriptCode(s string, sc *scope, depth, hops int) {
	if hops > maxSubscriptHops {
		return
	}
	if runsCode(s) {
		a.report(turnapi.RiskDangerous, RuleDynamicCommand, "bash runs the code in an array subscript or arithmetic ("+short(s)+")", rawPattern(s))
		if depth >= maxDepth {
			a.tooDeep = true
			return
		}
		// As the argument of a command, so that a name such as a[...]
		// is not read as an assignment.
		a.script(": "+s, sc, depth+1)
		return
	}
	name := strings.TrimSpace(s)
	if v, ok := sc.vars[name]; ok && isAssignment(name+"=") {
		a.subscriptCode(v, sc, depth, hops+1)
	}
}

// looksSubscript reports a value that is a name with a subscript that
// holds code, which bash runs wherever the value is used as a name or in
// arithmetic (${!x}, declare -n, [ $x -eq 1 ], ${a[x]}).
func looksSubscript(v string) bool {
	i := strings.IndexByte(v, '[')
	return i > 0 && isAssignment(strings.TrimSpace(v[:i])+"=") && runsCode(v[i:])
}

// runsCode reports text that holds a command or process substitution.
func runsCode(s string) bool {
	return strings.Contains(s, "$(") || strings.Contains(s, "`") || strings.Contains(s, "<(") || strings.Contains(s, ">(")
}

// arithWords checks the operands of arithmetic: (( )), $(( )), let,
// for (( )).
func (a *assessor) arithWords(n syntax.Node, sc *scope, depth int) {
	if n == nil {
		return
	}
	d := decoder{a: a, sc: sc, depth: depth}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch w := n.(type) {
		case *syntax.Word:
			if s, ok := d.literal(w); ok {
				a.subscriptCode(s, sc, depth, 0)
			}
			return false
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		}
		return true
	})
}

// testWords checks what [[ ]] evaluates: the operands of -eq, -lt ... are
// arithmetic, the operand of -v a name.
func (a *assessor) testWords(n syntax.Node, sc *scope, depth int) {
	d := decoder{a: a, sc: sc, depth: depth}
	check := func(x syntax.TestExpr) {
		if w, ok := x.(*syntax.Word); ok {
			if s, ok := d.literal(w); ok {
				a.subscriptCode(s, sc, depth, 0)
			}
		}
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch t := n.(type) {
		case *syntax.BinaryTest:
			switch t.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				check(t.X)
				check(t.Y)
			}
		case *syntax.UnaryTest:
			if t.Op == syntax.TsVarSet || t.Op == syntax.TsRefVar {
				check(t.X)
			}
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		}
		return true
	})
}

// declNames checks the names declare, local, export ... are given as
// quoted words ('a[$(cmd)]=1').
func (a *assessor) declNames(list []*syntax.Assign, sc *scope, depth int) {
	d := decoder{a: a, sc: sc, depth: depth}
	for _, as := range list {
		if as.Naked && as.Value != nil {
			if s, ok := d.literal(as.Value); ok {
				name, v, hasV := strings.Cut(s, "=")
				a.subscriptCode(name, sc, depth, 0)
				if hasV {
					a.runsVar(name, v, true, sc, depth)
				}
			}
		}
		if as.Name != nil && as.Value != nil {
			v, ok := d.literal(as.Value)
			a.runsVar(as.Name.Value, v, ok, sc, depth)
		}
	}
}

// nameArgs: printf -v NAME, read NAME..., test -v NAME, unset NAME and
// declare run when called through a wrapper evaluate the subscripts of the
// names they are given.
func (a *assessor) nameArgs(c *cmd) {
	var names []string
	switch c.name {
	case "printf":
		for i := 0; i < len(c.args) && strings.HasPrefix(c.args[i], "-"); i++ {
			switch {
			case c.args[i] == "-v" && i+1 < len(c.args):
				names = append(names, c.args[i+1])
			case strings.HasPrefix(c.args[i], "-v"):
				names = append(names, c.args[i][2:])
			}
		}
	case "test", "[":
		for i := 0; i+1 < len(c.args); i++ {
			switch c.args[i] {
			case "-v", "-R":
				names = append(names, c.args[i+1])
			case "-eq", "-ne", "-lt", "-le", "-gt", "-ge":
				names = append(names, c.args[i+1])
				if i > 0 {
					names = append(names, c.args[i-1])
				}
			}
		}
	default: // read, unset, declare, typeset, local, export, readonly, let, mapfile
		for _, arg := range c.args {
			name, _, _ := strings.Cut(arg, "=")
			if c.name == "let" {
				name = arg
			}
			names = append(names, name)
		}
	}
	for _, n := range names {
		a.subscriptCode(n, c.sc, c.depth, 0)
	}
}
