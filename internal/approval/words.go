package approval

import (
	"bytes"
	"io"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxValue bounds the length of a variable value remembered from an
// assignment, so that X=$X$X$X... cannot grow without limit.
const maxValue = 1024

// unknownSubst stands for the output of a command substitution that cannot
// be worked out statically. It is shell text for a parameter, so a script
// built from it is still seen as running something unknown.
const unknownSubst = "$_substitution"

// field is one word of a command after expansion.
type field struct {
	s string
	// lit reports that the word it came from is a literal: plain text and
	// quotes only, no expansion of any kind.
	lit bool
	// glob reports unquoted pattern characters (* ? [) in a literal.
	glob bool
}

// decodeMode says what an unknown variable expands to.
type decodeMode int

const (
	// keepNames expands an unknown variable to its own name, "$NAME":
	// a path such as "$DIR"/* stays relative to an unknown place.
	keepNames decodeMode = iota
	// unsetNames expands unknown variables as unset, so that defaults
	// such as ${RM:-rm} apply.
	unsetNames
)

// environ gives expand the variables a script set before, and fixed values
// for the rest: HOME is "~" so home paths keep one spelling.
type environ struct {
	vars map[string]string
	args []string // $@ when known
	mode decodeMode
}

func (e environ) Get(name string) expand.Variable {
	if name == "TALARIA_HOME" {
		// Wherever it points, paths below it are Talaria's own.
		return expand.Variable{Set: true, Kind: expand.String, Str: "$TALARIA_HOME"}
	}
	if v, ok := e.vars[name]; ok {
		return expand.Variable{Set: true, Kind: expand.String, Str: v}
	}
	switch {
	case (name == "@" || name == "*") && e.args != nil:
		return expand.Variable{Set: true, Kind: expand.Indexed, List: e.args}
	case name == "IFS":
		return expand.Variable{Set: true, Kind: expand.String, Str: " \t\n"}
	case name == "HOME":
		return expand.Variable{Set: true, Kind: expand.String, Str: "~"}
	case name == "HOME +" || name == "HOME -":
		// ~+ and ~- are the current and previous directories.
		return expand.Variable{Set: true, Kind: expand.String, Str: map[string]string{"HOME +": "$PWD", "HOME -": "$OLDPWD"}[name]}
	case strings.HasPrefix(name, "HOME "):
		return expand.Variable{Set: true, Kind: expand.String, Str: "/home/" + name[len("HOME "):]}
	case e.mode == unsetNames && (name == "SHELL" || name == "BASH"):
		return expand.Variable{Set: true, Kind: expand.String, Str: "/bin/bash"}
	case e.mode == unsetNames:
		return expand.Variable{}
	}
	return expand.Variable{Set: true, Kind: expand.String, Str: "$" + name}
}

// Set records an assignment made while expanding, as ${X:=value} does.
func (e environ) Set(name string, vr expand.Variable) error {
	if vr.Kind == expand.String && len(vr.Str) <= maxValue {
		e.vars[name] = vr.Str
	}
	return nil
}

func (e environ) Each(f func(string, expand.Variable) bool) {
	for _, k := range sortedKeys(e.vars) {
		if !f(k, e.Get(k)) {
			return
		}
	}
}

// decoder expands words without running anything: command substitutions
// that only print literal text (echo, printf, base64 -d of a literal ...)
// are evaluated, every other one becomes unknownSubst.
type decoder struct {
	a     *assessor
	sc    *scope
	mode  decodeMode
	depth int
}

func (d decoder) config() *expand.Config {
	return &expand.Config{
		Env: environ{vars: d.sc.vars, args: d.sc.args, mode: d.mode},
		CmdSubst: func(w io.Writer, cs *syntax.CmdSubst) error {
			out, ok := d.staticStmts(cs.Stmts)
			if !ok {
				out = unknownSubst
			}
			_, err := io.WriteString(w, out)
			return err
		},
		ProcSubst: func(ps *syntax.ProcSubst) (string, error) {
			if ps.Op != syntax.CmdIn {
				return "/dev/fd/62", nil
			}
			return d.sc.procFile(d.staticStmts(ps.Stmts)), nil
		},
	}
}

// fields expands one word as a command argument: brace expansion, field
// splitting and quote removal, no globbing. ok is false when expand fails.
func (d decoder) fields(w *syntax.Word) (out []string, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = nil, false
		}
	}()
	if !d.affordable(w) {
		return nil, false
	}
	fs, err := expand.Fields(d.config(), w)
	if err != nil {
		return nil, false
	}
	for _, f := range fs {
		d.spend(len(f))
	}
	return fs, true
}

// maxDecoded bounds the bytes one Assess decodes; past it words are
// unknown.
const maxDecoded = 8 << 20

// maxReplacement bounds the literal replacement text of ${X//a/b} that is
// worked out: replacing every character of a long value with a long text
// multiplies their lengths.
const maxReplacement = 16

// affordable reports whether a word can be expanded in reasonable time:
// no ${X//pattern/replacement} whose replacement expands something or is
// long, and the decoding budget is not spent.
func (d decoder) affordable(w syntax.Node) bool {
	if d.a != nil && (d.a.decoded > maxDecoded || d.a.fields > maxTotalFields) {
		d.a.tooDeep = true
		return false
	}
	ok, params := true, 0
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			params++
			if n.Repl != nil && n.Repl.With != nil && (!literalWord(n.Repl.With) || len(printNode(n.Repl.With)) > maxReplacement) {
				ok = false
			}
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false // expanded statically on their own
		}
		return ok && params <= maxParams
	})
	return ok && params <= maxParams
}

// maxParams bounds the parameter expansions of one word that are worked
// out, each of them at most maxValue bytes long, or that times
// maxReplacement for a replacement.
const maxParams = 64

// spend counts decoded bytes against maxDecoded.
func (d decoder) spend(n int) {
	if d.a != nil {
		d.a.decoded += n
	}
}

// literal expands one word as a single string (an assignment value or a
// redirection target).
func (d decoder) literal(w *syntax.Word) (out string, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = "", false
		}
	}()
	if !d.affordable(w) {
		return "", false
	}
	s, err := expand.Literal(d.config(), w)
	d.spend(len(s))
	return s, err == nil
}

// document expands a heredoc body.
func (d decoder) document(w *syntax.Word) (out string, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = "", false
		}
	}()
	if !d.affordable(w) {
		return "", false
	}
	s, err := expand.Document(d.config(), w)
	d.spend(len(s))
	return s, err == nil
}

// maxFields bounds the fields of one command that are checked: brace
// expansion multiplies them. A command with more is too complex.
const maxFields = 4096

// maxTotalFields bounds the fields brace expansion and field splitting
// add in one Assess; past it words are unknown and the command is too
// complex.
const maxTotalFields = 1 << 16

// words expands a command's words into fields.
func (d decoder) words(ws []*syntax.Word) []field {
	var out []field
	for _, w := range ws {
		lit := literalWord(w)
		glob := lit && unquotedGlob(w)
		fs, ok := d.fields(w)
		if !ok {
			fs, lit = []string{unknownSubst}, false
		}
		if d.a != nil {
			d.a.fields += len(fs) - 1 // what brace expansion and splitting add
		}
		if len(out)+len(fs) > maxFields {
			if d.a != nil {
				d.a.tooDeep = true
			}
			fs = fs[:max(maxFields-len(out), 0)]
		}
		for _, s := range fs {
			out = append(out, field{s: s, lit: lit, glob: glob})
		}
	}
	return out
}

// literalWord reports whether a word is plain text and quotes only: Lit,
// '...', $'...' and "..." holding no expansion, and no brace expansion.
func literalWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	c := *w
	return !syntax.SplitBraces(&c)
}

// unquotedGlob reports pattern characters outside quotes.
func unquotedGlob(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && isPattern(unescaped(l.Value)) {
			return true
		}
	}
	return false
}

// isPattern reports pattern characters: * or ?, or a [...] class.
func isPattern(s string) bool {
	if strings.ContainsAny(s, "*?") {
		return true
	}
	i := strings.IndexByte(s, '[')
	return i >= 0 && strings.IndexByte(s[i+1:], ']') > 0
}

// unescaped drops backslash-escaped characters from unquoted text.
func unescaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// staticStmts works out the output of statements that only print literal
// text: echo, printf, cat of a heredoc, and pipelines of those through
// base64 -d, rev, xxd -r -p and tr-free decoders.
func (d decoder) staticStmts(stmts []*syntax.Stmt) (string, bool) {
	if len(stmts) != 1 || d.depth > maxDepth {
		return "", false
	}
	var stages []*syntax.Stmt
	flattenPipe(stmts[0], &stages)
	out, known := "", false
	for i, s := range stages {
		ce, ok := s.Cmd.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 {
			return "", false
		}
		inner := decoder{a: d.a, sc: d.sc, mode: d.mode, depth: d.depth + 1}
		f := inner.words(ce.Args)
		args := make([]string, len(f))
		for k := range f {
			args[k] = f[k].s
		}
		stdin, hasStdin := inner.stdin(s.Redirs)
		if i > 0 {
			stdin, hasStdin = out, known
		}
		out, known = staticOutput(args, stdin, hasStdin)
		if !known {
			return "", false
		}
	}
	return out, known
}

// stdin returns the text heredocs and here-strings feed a command.
func (d decoder) stdin(rs []*syntax.Redirect) (string, bool) {
	var b bytes.Buffer
	found := false
	for _, r := range rs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc == nil {
				continue
			}
			s, ok := d.document(r.Hdoc)
			if !ok {
				return "", false
			}
			b.WriteString(s)
			found = true
		case syntax.WordHdoc:
			s, ok := d.literal(r.Word)
			if !ok {
				return "", false
			}
			b.WriteString(s + "\n")
			found = true
		}
	}
	return b.String(), found
}

// flattenPipe lists the stages of a pipeline in order.
func flattenPipe(s *syntax.Stmt, out *[]*syntax.Stmt) {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(s.Redirs) == 0 {
		flattenPipe(b.X, out)
		flattenPipe(b.Y, out)
		return
	}
	// { sh; } and (sh) read the pipe as sh would.
	for len(s.Redirs) == 0 && !s.Negated && !s.Background {
		var inner []*syntax.Stmt
		switch c := s.Cmd.(type) {
		case *syntax.Block:
			inner = c.Stmts
		case *syntax.Subshell:
			inner = c.Stmts
		}
		if len(inner) != 1 {
			break
		}
		s = inner[0]
		if _, ok := s.Cmd.(*syntax.BinaryCmd); ok {
			flattenPipe(s, out)
			return
		}
	}
	*out = append(*out, s)
}
