package approval

import (
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// maxDepth bounds the nesting of substitutions and of scripts handed to
// shells (bash -c, eval, heredocs). Deeper text is not checked and the
// command is reported as RuleTooComplex.
const maxDepth = 24

// maxCalls bounds how many calls of functions the text defined are
// checked with their arguments; more is too complex.
const maxCalls = 64

// maxScripts bounds how many nested scripts one Assess parses, so that
// checking stays roughly linear in the length of the command.
const maxScripts = 4096

// Assess classifies a shell command. It parses the command with a real
// shell parser, decodes every word without running anything, looks
// through wrappers such as sudo, env, xargs, find -exec and "bash -c", and
// checks every command that would run, including the scripts handed to
// nested shells and interpreters. Blocked wins over Dangerous; among
// findings of the strongest risk the first one, in the order the text is
// read, gives Rule and Reason.
func Assess(command string) turnapi.Assessment {
	return assessWith(command, &assessor{})
}

// assessWith is Assess with the assessor a (its filters set).
func assessWith(command string, a *assessor) (out turnapi.Assessment) {
	defer func() {
		if recover() != nil {
			out = turnapi.Assessment{Risk: turnapi.RiskDangerous, Rule: RuleUnparsable,
				Reason: "could not analyse the command", Pattern: boundPattern(rawPattern(command))}
		}
	}()
	a.script(command, newScope(), 0)
	if a.tooDeep {
		a.report(turnapi.RiskDangerous, RuleTooComplex, "command nests shells or substitutions too deeply to check", rawPattern(command))
	}
	return a.result()
}

// assessor accumulates the findings of one Assess call.
type assessor struct {
	best  turnapi.Assessment
	parts []string // patterns of the Dangerous findings
	// weak are the not_read_only findings, by the command (seq) they are
	// about; strong marks the commands that have a finding of their own.
	weak      []weakPart
	strong    map[int]bool
	seq, nseq int
	tooDeep   bool
	scripts   int
	calls     int // function calls checked again, see maxCalls
	decoded   int // bytes decoded, see maxDecoded
	// ctx is where the command being checked runs, when that is not the
	// working directory of this machine ("sudo ", "ssh host: ", "cd /x &&
	// "); it starts every pattern reported meanwhile.
	ctx    string
	fields int // fields expanded, see maxTotalFields
	// filtered: only Blocked findings and Dangerous ones of keep count
	// (AssessIn, inside a sandbox).
	filtered bool
	keep     []string
	// allowlist: outside a sandbox only commands known to only read are
	// Safe (AssessIn without a sandbox).
	allowlist bool
}

// weakPart is a not_read_only finding about command seq.
type weakPart struct {
	seq     int
	pattern string
}

// scope is what a script has set up so far: variables with a known value,
// and files a download wrote.
type scope struct {
	vars       map[string]string
	downloaded map[string]bool
	// procs holds what each <(...) prints, by the /dev/fd path that
	// stands for it; ok is false when it is not known.
	procs map[string]procOutput
	// written holds what the command wrote into files by redirection,
	// by resolved path; ok is false when it is not known.
	written map[string]procOutput
	// cwd is the directory an earlier cd changed to, when it is known.
	cwd string
	// links maps the symbolic links the command made to their targets.
	links map[string]string
	// peak is the most dangerous directory (see dirWeight) the shell was
	// in during the statement being checked.
	peak string
	// args are the positional parameters $1 ..., when known.
	args []string
	// funcs are the bodies of the functions the text defined, by name.
	funcs map[string]*syntax.Stmt
}

// withArgs is a scope for "sh -c SCRIPT ARG0 ARGS...": the variables so
// far, and $0, $1 ... set from the arguments.
func (sc *scope) withArgs(args []string) *scope {
	child := *sc
	child.vars = maps.Clone(sc.vars)
	child.args = args[1:]
	child.vars["0"] = args[0]
	for i := 1; i <= 9; i++ {
		if i < len(args) {
			child.vars[strconv.Itoa(i)] = args[i]
		} else {
			delete(child.vars, strconv.Itoa(i))
		}
	}
	return &child
}

// resolve joins a relative path to the directory an earlier cd changed
// to: an absolute path, a path in a home ("~/x"), one relative to the
// working directory ("../x"), or one below an unknown place ("$D/x").
func (sc *scope) resolve(p string) string {
	if sc.cwd != "" && p != "" && !strings.HasPrefix(p, "/") && !isHomePath(p) && !strings.HasPrefix(p, "$") {
		p = joinDir(sc.cwd, p)
	}
	return sc.followLinks(p)
}

// followLinks replaces a symbolic link the command made (ln -s / x) at
// the start of p by what it points to.
func (sc *scope) followLinks(p string) string {
	for _, l := range sortedKeys(sc.links) {
		c := path.Clean(p)
		if c == l || strings.HasPrefix(c, l+"/") {
			return sc.links[l] + c[len(l):]
		}
	}
	return p
}

// isHomePath reports a path that starts with a home directory: "~",
// "~/x", "~bob/x", but not "~+" or "~-" (the current and previous
// directories).
func isHomePath(p string) bool {
	return strings.HasPrefix(p, "~") && !strings.HasPrefix(p, "~+") && !strings.HasPrefix(p, "~-")
}

// joinDir joins p to dir, keeping the spelling of dir's start: a home
// stays "~" unless p climbs out of it, an unknown "$D" stays unknown.
func joinDir(dir, p string) string {
	var head, root string
	switch {
	case strings.HasPrefix(dir, "/"):
		return path.Join(dir, p)
	case isHomePath(dir):
		root = "/home/\x00"
	case strings.HasPrefix(dir, "$") || strings.HasPrefix(dir, "~"):
		root = "/\x00/\x00"
	default: // relative to the working directory
		return path.Join(dir, p)
	}
	head, rest, _ := strings.Cut(dir, "/")
	if strings.HasPrefix(head, "~+") || strings.HasPrefix(head, "~-") {
		head = "$PWD"
	}
	j := path.Join(root, rest, p)
	if j == root {
		return head
	}
	if r, ok := strings.CutPrefix(j, root+"/"); ok {
		return head + "/" + r
	}
	if root != "/home/\x00" {
		return "$DIR" + strings.TrimPrefix(j, "/\x00")
	}
	return j
}

// chdir is the directory "cd dir" changes to.
func (sc *scope) chdir(dir string) string {
	switch {
	case dir == "":
		return sc.cwd
	case dir == "-":
		return "$OLDPWD"
	case strings.HasPrefix(dir, "~+") || strings.HasPrefix(dir, "~-"):
		return joinDir("$PWD", strings.TrimLeft(dir[2:], "/"))
	case strings.HasPrefix(dir, "/"):
		return sc.followLinks(path.Clean(dir))
	case isHomePath(dir):
		return sc.followLinks(joinDir(dir, "."))
	case strings.Contains(dir, "$"):
		if strings.HasPrefix(dir, "$") {
			return joinDir(dir, ".")
		}
		return "$DIR"
	case sc.vars["CDPATH"] != "":
		// cd searches CDPATH first: the most dangerous candidate.
		best := sc.resolve(dir)
		for _, e := range strings.Split(sc.vars["CDPATH"], ":") {
			if d := sc.chdir(path.Join(e, dir)); e != "" && e != "." && dirWeight(d) > dirWeight(best) {
				best = d
			}
		}
		return best
	case sc.cwd == "":
		return sc.followLinks(path.Clean(dir))
	}
	return sc.followLinks(joinDir(sc.cwd, dir))
}

// where is how a pattern names the directory a command runs in, when it
// is not the working directory.
func (sc *scope) where() string {
	if sc.cwd == "" || sc.cwd == "." {
		return ""
	}
	return "cd " + sc.cwd + " && "
}

type procOutput struct {
	text string
	ok   bool
}

func newScope() *scope {
	return &scope{vars: map[string]string{}, downloaded: map[string]bool{}, procs: map[string]procOutput{},
		written: map[string]procOutput{}, links: map[string]string{}, funcs: map[string]*syntax.Stmt{}}
}

// procFile names the output of a process substitution: the same path for
// the same output, so that decoding twice gives the same words.
func (sc *scope) procFile(text string, ok bool) string {
	for _, k := range sortedKeys(sc.procs) {
		if sc.procs[k] == (procOutput{text, ok}) {
			return k
		}
	}
	name := "/dev/fd/" + strconv.Itoa(63+len(sc.procs))
	sc.procs[name] = procOutput{text, ok}
	return name
}

// report records a finding. The first finding of the strongest risk gives
// the verdict; every Dangerous finding adds its pattern.
func (a *assessor) report(r turnapi.Risk, rule, reason, pattern string) {
	if a.filtered && r == turnapi.RiskDangerous && !slices.Contains(a.keep, rule) {
		return
	}
	switch {
	case r == turnapi.RiskDangerous && rule == RuleNotReadOnly:
		a.weak = append(a.weak, weakPart{a.seq, a.ctx + pattern})
	case r == turnapi.RiskDangerous:
		a.parts = append(a.parts, a.ctx+pattern)
		if a.strong == nil {
			a.strong = map[int]bool{}
		}
		a.strong[a.seq] = true
	}
	// A finding of a specific rule says more than "not known to only
	// read": it gives Rule and Reason at the same risk.
	if r > a.best.Risk || r == a.best.Risk && a.best.Rule == RuleNotReadOnly && rule != RuleNotReadOnly {
		a.best = turnapi.Assessment{Risk: r, Rule: rule, Reason: reason}
	}
}

// result is the verdict with the pattern of a Dangerous one.
func (a *assessor) result() turnapi.Assessment {
	out := a.best
	if out.Risk == turnapi.RiskDangerous {
		// The patterns of specific findings key a grant, and those of
		// commands "not known to only read" that have none, so that a
		// grant of "rm -rf ./build" still covers "rm -fr build/" but not
		// "rm -rf ./build; python3 x.py".
		parts := slices.Clone(a.parts)
		for _, w := range a.weak {
			if !a.strong[w.seq] {
				parts = append(parts, w.pattern)
			}
		}
		slices.Sort(parts)
		out.Pattern = boundPattern(strings.Join(slices.Compact(parts), " ; "))
	}
	return out
}

// script parses shell text and checks it; it reports whether the text runs
// a downloader anywhere.
func (a *assessor) script(src string, sc *scope, depth int) bool {
	a.scripts++
	if depth > maxDepth || a.scripts > maxScripts || parenDepth(src) > maxParens {
		a.tooDeep = true
		return false
	}
	f, err := syntax.NewParser(syntax.KeepComments(false), syntax.Variant(syntax.LangBash)).
		Parse(strings.NewReader(src), "")
	if err != nil {
		a.report(turnapi.RiskDangerous, RuleUnparsable, "could not parse the command ("+short(err.Error())+")", rawPattern(src))
		return false
	}
	if commentContinues(src) {
		a.report(turnapi.RiskDangerous, RuleUnparsable, "could not parse the command (a comment ends with a backslash)", rawPattern(src))
		return false
	}
	a.scan(f)
	return a.stmts(f.Stmts, sc, depth)
}

// commentContinues reports a comment that ends with a backslash before a
// newline: the parser joins the next line to the comment while bash runs
// it, so what runs cannot be told from the parse.
func commentContinues(src string) bool {
	if !strings.Contains(src, "#") || !strings.Contains(src, "\\\n") && !strings.Contains(src, "\\\r\n") {
		return false
	}
	f, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).
		Parse(strings.NewReader(src), "")
	if err != nil {
		return true
	}
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

// maxParens bounds the nesting of parentheses handed to the parser, whose
// time grows faster than linearly on deeply nested arithmetic.
const maxParens = 1000

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

func (a *assessor) reportDynamic(n syntax.Node) {
	text := printNode(n)
	a.report(turnapi.RiskDangerous, RuleDynamicCommand, "cannot tell what runs: the command name is built by the shell ("+short(text)+")", text)
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

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
