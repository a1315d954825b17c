package approval

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Bounds of one assessment. Text nested deeper than maxDepth (scripts
// handed to shells within scripts), more than maxScripts scripts or
// parentheses nested deeper than maxParens (the parser's time grows faster
// than linearly with them) is not read: it is Dangerous (RuleTooComplex).
const (
	maxDepth   = 16
	maxScripts = 256
	maxParens  = 1000
)

// assessor accumulates the findings of one assessment.
type assessor struct {
	best  turnapi.Assessment
	parts []string // patterns of the Dangerous findings
	// keep, when filtered, are the Dangerous rules that count (inside a
	// sandbox); other Dangerous findings are dropped.
	filtered bool
	keep     []string
	// allowlist: outside a sandbox only what is known to only read is Safe.
	allowlist bool
	// dir is where the next command runs: "" for the working directory,
	// an absolute path after cd, or unknownDir.
	dir     string
	scripts int
	// fed: the shell being checked reads a literal script on its input
	// (a heredoc or here-string), which was read as a script.
	fed bool
}

// unknownDir is a directory the text does not fix (cd "$D", cd -).
const unknownDir = "?"

// assess classifies command with a.
func (a *assessor) assess(command string) (out turnapi.Assessment) {
	defer func() {
		if recover() != nil {
			out = turnapi.Assessment{Risk: turnapi.RiskDangerous, Rule: RuleUnparsable,
				Reason: "could not analyse the command", Pattern: boundPattern(rawPattern(command))}
		}
	}()
	a.script(command, 0)
	return a.result()
}

// report records a finding. The first finding of the strongest risk gives
// the verdict; every Dangerous finding adds its pattern.
func (a *assessor) report(r turnapi.Risk, rule, reason, pattern string) {
	if a.filtered && r == turnapi.RiskDangerous && !slices.Contains(a.keep, rule) {
		return
	}
	if r == turnapi.RiskDangerous {
		if pattern == "" {
			pattern = rule
		}
		a.parts = append(a.parts, pattern)
	}
	// A finding of a specific rule says more than "not known to only
	// read": it gives Rule and Reason at the same risk.
	if r > a.best.Risk || r == a.best.Risk && a.best.Rule == RuleNotReadOnly && rule != RuleNotReadOnly {
		a.best = turnapi.Assessment{Risk: r, Rule: rule, Reason: reason}
	}
}

// result is the verdict, with the pattern of a Dangerous one: the sorted
// patterns of its findings, so that a grant of "rm -rf ./build" covers
// "rm -fr build/" but not "rm -rf ./build; rm -rf ./src".
func (a *assessor) result() turnapi.Assessment {
	out := a.best
	if out.Risk == turnapi.RiskDangerous {
		parts := slices.Clone(a.parts)
		slices.Sort(parts)
		out.Pattern = boundPattern(strings.Join(slices.Compact(parts), " ; "))
	}
	return out
}

// script parses shell text and checks every command in it.
func (a *assessor) script(src string, depth int) {
	a.scripts++
	if depth > maxDepth || a.scripts > maxScripts || parenDepth(src) > maxParens {
		a.report(turnapi.RiskDangerous, RuleTooComplex, "command nests shells too deeply to check", rawPattern(src))
		return
	}
	f, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		a.report(turnapi.RiskDangerous, RuleUnparsable, "could not parse the command ("+short(err.Error())+")", rawPattern(src))
		return
	}
	if commentContinues(f, src) {
		a.report(turnapi.RiskDangerous, RuleUnparsable, "could not parse the command (a comment ends with a backslash)", rawPattern(src))
		return
	}
	a.forkBomb(f)
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			a.redirects(n, depth)
		case *syntax.CallExpr:
			a.callExpr(n, depth)
			a.fed = false
		case *syntax.ArithmCmd, *syntax.ArithmExp, *syntax.LetClause, *syntax.DeclClause, *syntax.CoprocClause:
			// Arithmetic evaluates array subscripts in values ('a[$(cmd)]').
			a.notReadOnly(printNode(n), "evaluates shell arithmetic or declarations")
		case *syntax.TestClause:
			if arithmeticTest(n) {
				a.notReadOnly(printNode(n), "evaluates shell arithmetic")
			}
		case *syntax.ParamExp:
			if n.Index != nil || n.Slice != nil || n.Excl {
				a.notReadOnly(printNode(n), "evaluates shell arithmetic")
			}
		}
		return true
	})
}

// notReadOnly reports, outside a sandbox, what is not known to only read.
func (a *assessor) notReadOnly(pattern, what string) {
	if a.allowlist {
		a.report(turnapi.RiskDangerous, RuleNotReadOnly, what+" (outside the sandbox every such command asks)", pattern)
	}
}

// arithmeticTest reports a [[ ]] test that evaluates arithmetic (-eq ...)
// or names a variable (-v).
func arithmeticTest(t *syntax.TestClause) bool {
	found := false
	syntax.Walk(t, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.BinaryTest:
			found = found || n.Op >= syntax.TsEql && n.Op <= syntax.TsGeq
		case *syntax.UnaryTest:
			found = found || n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar
		}
		return !found
	})
	return found
}

// redirects checks a statement's redirections: writes (outside a sandbox
// only to /dev/null), writes onto a disk, secret files read, and SQL fed
// to a database client.
func (a *assessor) redirects(s *syntax.Stmt, depth int) {
	client := ""
	if ce, ok := s.Cmd.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
		client = baseName(decode(ce.Args[0]).s)
	}
	for _, r := range s.Redirs {
		if r.Word == nil {
			continue
		}
		target := decode(r.Word)
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.DplOut, syntax.RdrInOut:
			if (r.Op == syntax.DplOut) && (isFD(target.s) || target.s == "-") {
				continue
			}
			if isDisk(a.resolve(target.s)) {
				a.report(turnapi.RiskBlocked, RuleDiskRedirect, "writes onto a disk ("+short(target.s)+")", "")
			}
			switch target.s {
			case "/dev/null", "/dev/stdout", "/dev/stderr":
			default:
				a.notReadOnly(printNode(s), "writes "+short(target.s))
			}
		case syntax.RdrIn:
			if isSecretFile(a.resolve(target.s)) {
				a.report(turnapi.RiskDangerous, RuleSecretRead, "reads a secret file (< "+short(target.s)+")", "< "+target.s)
			}
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			body := target // a here-string
			if r.Op != syntax.WordHdoc && r.Hdoc != nil {
				body = decode(r.Hdoc)
			}
			if slices.Contains(shells, client) && body.exact {
				a.script(body.s, depth+1) // a literal script fed to a shell is read
				a.fed = true
			}
			if sqlClients[client] && sqlDrop.MatchString(body.s) {
				a.report(turnapi.RiskDangerous, RuleSQLDrop, "drops or truncates database data ("+client+": DROP/TRUNCATE)", client+" <<< "+short(body.s))
			}
		}
	}
}

// resolve is path p as seen from where the current command runs.
func (a *assessor) resolve(p string) string {
	switch {
	case p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "$"):
		return p
	case a.dir == "":
		return p
	case a.dir == unknownDir:
		return unknownDir + "/" + p
	}
	return path.Join(a.dir, p) + map[bool]string{true: "/", false: ""}[strings.HasSuffix(p, "/")]
}

// chdir follows cd: to a literal directory, home, or an unknown place.
func (a *assessor) chdir(c *cmd) {
	ops := operands(c.args)
	switch {
	case len(ops) == 0:
		a.dir = "~"
	case !c.allExact() || ops[0] == "-" || strings.HasPrefix(ops[0], "~+") || strings.HasPrefix(ops[0], "~-"):
		a.dir = unknownDir
	case strings.HasPrefix(ops[0], "/") || strings.HasPrefix(ops[0], "~"):
		a.dir = path.Clean(ops[0])
	default:
		d := path.Clean(a.resolve(ops[0]))
		if d == ".." || strings.HasPrefix(d, "../") || strings.HasPrefix(d, unknownDir) {
			d = unknownDir
		}
		a.dir = d
	}
}

// commentContinues reports a comment that ends with a backslash before a
// newline: the parser joins the next line to the comment while bash runs
// it, so what runs cannot be told from the parse.
func commentContinues(f *syntax.File, src string) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.Comment); ok {
			text := strings.TrimSuffix(strings.TrimSuffix(c.Text, "\n"), "\r")
			end := int(c.End().Offset())
			if strings.Contains(c.Text, "\\\n") || strings.HasSuffix(text, "\\") ||
				strings.HasSuffix(c.Text, "\\") && end < len(src) && (src[end] == '\n' || src[end] == '\r') {
				found = true
			}
		}
		return !found
	})
	return found
}

// parenDepth is the deepest nesting of parentheses in src, quotes ignored.
func parenDepth(src string) int {
	depth, deepest := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(':
			depth++
			deepest = max(deepest, depth)
		case ')':
			depth = max(depth-1, 0)
		}
	}
	return deepest
}

// printNode prints a syntax node as one line of shell text.
func printNode(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, n); err != nil {
		return ""
	}
	return strings.TrimSpace(b.String())
}

// rawPattern is the pattern of a finding about the whole text: the text
// with runs of white space collapsed.
func rawPattern(src string) string {
	return strings.Join(strings.Fields(src), " ")
}

// short shortens text quoted in a Reason to one line of at most 60 bytes.
func short(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) <= 60 {
		return s
	}
	cut := 60
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}

// isFD reports a file descriptor number.
func isFD(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// baseName is the program a command word names: its last path element.
func baseName(w string) string {
	if i := strings.LastIndexByte(w, '/'); i >= 0 {
		return w[i+1:]
	}
	return w
}
