package approval

import (
	"path"

	"mvdan.cc/sh/v3/syntax"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// stmts checks statements in order; it reports whether any runs a
// downloader.
func (a *assessor) stmts(list []*syntax.Stmt, sc *scope, depth int) bool {
	downloads := false
	for _, s := range list {
		outer := sc.peak
		sc.peak = sc.cwd
		if a.stmt(s, sc, depth) {
			downloads = true
		}
		if conditional(s) && dirWeight(sc.peak) > dirWeight(sc.cwd) {
			// Some of its commands may not have run: the shell may be
			// in any directory a cd in it went to, or where it was.
			// The most dangerous one is kept.
			sc.cwd = sc.peak
		}
		if dirWeight(outer) > dirWeight(sc.peak) {
			sc.peak = outer
		}
	}
	return downloads
}

// conditional reports a statement whose commands may not all run.
func conditional(s *syntax.Stmt) bool {
	switch c := s.Cmd.(type) {
	case *syntax.BinaryCmd:
		return c.Op == syntax.AndStmt || c.Op == syntax.OrStmt
	case *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause:
		return true
	}
	return false
}

// dirWeight ranks directories by what a delete or write there can harm.
func dirWeight(d string) int {
	switch {
	case d == "":
		return 1
	case isRootTarget(d):
		return 4
	case isHomeRoot(d) || isSystemDir(d):
		return 3
	case isSystemPath(d) || isHomeSensitive(d) || isTalariaHome(d):
		return 2
	}
	return 1
}

// stmt checks one statement and its redirections.
func (a *assessor) stmt(s *syntax.Stmt, sc *scope, depth int) bool {
	if s == nil {
		return false
	}
	if c, ok := s.Cmd.(*syntax.BinaryCmd); ok && (c.Op == syntax.Pipe || c.Op == syntax.PipeAll) {
		downloads := a.redirects(s, sc, depth)
		return a.pipeline(s, sc, depth) || downloads
	}
	if c, ok := s.Cmd.(*syntax.CallExpr); ok {
		info := a.callStmt(s, c, sc, depth)
		return info.downloader || info.subsDownload
	}
	downloads := a.redirects(s, sc, depth)
	if a.command(s.Cmd, sc, depth) {
		downloads = true
	}
	return downloads
}

// command checks a compound command.
func (a *assessor) command(cmd syntax.Command, sc *scope, depth int) bool {
	d := false
	or := func(b bool) {
		d = d || b
	}
	switch c := cmd.(type) {
	case *syntax.BinaryCmd:
		or(a.stmt(c.X, sc, depth))
		or(a.stmt(c.Y, sc, depth))
	case *syntax.Block:
		or(a.stmts(c.Stmts, sc, depth))
	case *syntax.Subshell:
		cwd := sc.cwd
		or(a.stmts(c.Stmts, sc, depth))
		sc.cwd = cwd
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			or(a.stmts(ic.Cond, sc, depth))
			or(a.stmts(ic.Then, sc, depth))
		}
	case *syntax.WhileClause:
		or(a.stmts(c.Cond, sc, depth))
		or(a.stmts(c.Do, sc, depth))
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			for _, w := range l.Items {
				or(a.subs(w, sc, depth))
			}
			if l.Name != nil {
				delete(sc.vars, l.Name.Value)
			}
		case *syntax.CStyleLoop:
			or(a.subs(l, sc, depth))
			a.arithWords(l, sc, depth)
		}
		or(a.stmts(c.Do, sc, depth))
	case *syntax.CaseClause:
		or(a.subs(c.Word, sc, depth))
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				or(a.subs(p, sc, depth))
			}
			or(a.stmts(it.Stmts, sc, depth))
		}
	case *syntax.FuncDecl:
		// A function is checked where it is defined, as if it ran, and
		// again where it is called with arguments.
		if sc.funcs != nil && c.Name != nil {
			sc.funcs[c.Name.Value] = c.Body
		}
		or(a.stmt(c.Body, sc, depth))
	case *syntax.ArithmCmd:
		or(a.subs(c.X, sc, depth))
		a.arithWords(c.X, sc, depth)
	case *syntax.TestClause:
		or(a.subs(c.X, sc, depth))
		a.testWords(c.X, sc, depth)
	case *syntax.LetClause:
		for _, e := range c.Exprs {
			or(a.subs(e, sc, depth))
			a.arithWords(e, sc, depth)
		}
	case *syntax.DeclClause:
		for _, as := range c.Args {
			or(a.subs(as, sc, depth))
		}
		a.declNames(c.Args, sc, depth)
		a.assign(c.Args, sc, depth)
	case *syntax.TimeClause:
		or(a.stmt(c.Stmt, sc, depth))
	case *syntax.CoprocClause:
		or(a.stmt(c.Stmt, sc, depth))
	case *syntax.TestDecl:
		or(a.stmt(c.Body, sc, depth))
	case nil:
	default:
		or(a.subs(c, sc, depth))
	}
	return d
}

// subs checks the command and process substitutions inside a node that
// holds no statements of its own (a word, an assignment, an arithmetic or
// test expression); it reports whether one runs a downloader.
func (a *assessor) subs(n syntax.Node, sc *scope, depth int) bool {
	if n == nil {
		return false
	}
	downloads := false
	cwd := sc.cwd
	defer func() { sc.cwd = cwd }() // substitutions run in subshells
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			if depth >= maxDepth {
				a.tooDeep = true
			} else if a.stmts(n.Stmts, sc, depth+1) {
				downloads = true
			}
			return false
		case *syntax.ProcSubst:
			if depth >= maxDepth {
				a.tooDeep = true
			} else if a.stmts(n.Stmts, sc, depth+1) {
				downloads = true
			}
			return false
		case *syntax.ArithmExp:
			a.arithWords(n.X, sc, depth)
		}
		return true
	})
	return downloads
}

// assign remembers variables whose value is known.
func (a *assessor) assign(list []*syntax.Assign, sc *scope, depth int) {
	d := decoder{a: a, sc: sc, depth: depth}
	for _, as := range list {
		if as.Name == nil {
			continue
		}
		name := as.Name.Value
		if as.Value == nil || as.Array != nil || as.Index != nil {
			delete(sc.vars, name)
			continue
		}
		v, ok := d.literal(as.Value)
		if as.Append {
			v = sc.vars[name] + v
		}
		if !ok || len(v) > maxValue {
			delete(sc.vars, name)
			continue
		}
		if looksSubscript(v) {
			// Used as a name or in arithmetic, bash runs it.
			a.subscriptCode(v, sc, depth, 0)
		}
		sc.vars[name] = v
	}
}

// redirects checks the redirection targets of a statement and the
// substitutions in them and in heredocs. The pattern of a finding is the
// whole statement, so that a grant covers what is written too.
func (a *assessor) redirects(s *syntax.Stmt, sc *scope, depth int) bool {
	downloads := false
	d := decoder{a: a, sc: sc, depth: depth}
	pat := ""
	saved := a.ctx
	a.ctx += sc.where()
	defer func() { a.ctx = saved }()
	for _, r := range s.Redirs {
		if a.subs(r.Word, sc, depth) {
			downloads = true
		}
		if r.Hdoc != nil && a.subs(r.Hdoc, sc, depth) {
			downloads = true
		}
		if r.Op == syntax.RdrIn && r.Word != nil {
			if t, ok := d.literal(r.Word); ok && isSecretFile(sc.resolve(t)) {
				a.report(turnapi.RiskDangerous, RuleSecretRead, "reads a secret file (< "+short(t)+")", rawPattern(printNode(s)))
			}
		}
		if !writesTo(r.Op) || r.Word == nil {
			continue
		}
		t, ok := d.literal(r.Word)
		if r.Op == syntax.DplOut && ok && isFD(t) {
			continue
		}
		if !ok {
			a.writeCheck(printNode(r.Word), rawPattern(printNode(s)))
			continue
		}
		t = sc.resolve(t)
		a.writeCheck(t, rawPattern(printNode(s)))
		a.remember(s, r.Op, t, sc, depth)
		if pat == "" {
			pat = rawPattern(printNode(s))
		}
		if hasMetadataHost(t) {
			a.report(turnapi.RiskDangerous, RuleCloudMetadata, "contacts the cloud metadata service ("+short(t)+")", pat)
		}
		a.writeTarget(t, r.Op.String(), pat, true)
	}
	return downloads
}

// remember notes what a redirection writes into a file, so that running
// the file later is checked as the script it holds.
func (a *assessor) remember(s *syntax.Stmt, op syntax.RedirOperator, file string, sc *scope, depth int) {
	if op == syntax.DplOut {
		return
	}
	d := decoder{a: a, sc: sc, depth: depth}
	text, ok := d.stageOutput(s, "", false)
	key := path.Clean(file)
	if prev, seen := sc.written[key]; seen && (op == syntax.AppOut || op == syntax.AppAll) {
		text, ok = prev.text+text, ok && prev.ok
	}
	if len(text) > maxValue*64 {
		text, ok = "", false
	}
	sc.written[key] = procOutput{text, ok}
}

// writesTo reports redirections that open a file for writing.
func writesTo(op syntax.RedirOperator) bool {
	switch op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.DplOut, syntax.RdrClob,
		syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
		return true
	}
	return false
}

// isFD reports a file descriptor number or "-" after >&.
func isFD(s string) bool {
	if s == "-" || s == "" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
