package approval

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// cmd is a simple command with its wrappers removed, ready for the rules.
type cmd struct {
	name  string // the program: the base name of the command word
	args  []string
	exact []bool // exact[i]: the shell gives args[i] as it is
	via   string // wrappers that change who or where it runs ("sudo ")
	dir   string // where it runs (assessor.dir)
	depth int    // nesting of the script it is in
}

// pattern is how the command shows in a grant: where it runs, then canon.
func (c *cmd) pattern() string {
	p := c.via + canon(c.name, c.args)
	if c.dir != "" {
		p = "cd " + c.dir + " && " + p
	}
	return p
}

// allExact reports whether the shell gives every argument as written.
func (c *cmd) allExact() bool { return !slices.Contains(c.exact, false) }

// unknownWord stands for words nobody can read (the input of xargs).
var unknownWord = word{s: "$_"}

// wrapper is a program that runs the command after its options.
type wrapper struct {
	opts     string   // short options that take a value
	long     []string // long options that take a value
	operands int      // operands before the command (timeout's duration)
	readOnly bool     // runs the command and does nothing else
	via      bool     // changes who or where the command runs
}

var wrappers = map[string]wrapper{
	"sudo":    {opts: "ugCDhpRrTU", long: []string{"user", "group", "chdir", "host", "prompt", "role", "type", "close-from", "other-user", "chroot", "command-timeout"}, via: true},
	"doas":    {opts: "uC", via: true},
	"env":     {opts: "uC", long: []string{"unset", "chdir"}, readOnly: true},
	"nohup":   {readOnly: true},
	"nice":    {opts: "n", long: []string{"adjustment"}, readOnly: true},
	"ionice":  {opts: "cnpPu", long: []string{"class", "classdata", "pid", "pgid", "uid"}, readOnly: true},
	"timeout": {opts: "sk", long: []string{"signal", "kill-after"}, operands: 1, readOnly: true},
	"time":    {opts: "fo", long: []string{"format", "output"}, readOnly: true},
	"command": {readOnly: true},
	"builtin": {readOnly: true},
	"exec":    {opts: "a", readOnly: true},
	"stdbuf":  {opts: "ioe", long: []string{"input", "output", "error"}, readOnly: true},
	"setsid":  {readOnly: true},
	"chroot":  {long: []string{"userspec", "groups"}, operands: 1, via: true},
	"xargs":   {opts: "aEdeIiLlnPs", long: []string{"arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"}},
	"flock":   {opts: "wEc", long: []string{"timeout", "conflict-exit-code", "command"}, operands: 1},
	"strace":  {opts: "abeEIoOpPsSuUX", long: []string{"output", "user", "env"}},
	"unshare": {opts: "S", long: []string{"setuid", "setgid", "root", "wd"}, via: true},
	"nsenter": {opts: "tSGrwe", long: []string{"target", "setuid", "setgid", "root", "wd"}, via: true},
	"watch":   {opts: "nd", long: []string{"interval", "differences"}},
	"script":  {opts: "cEIOT", long: []string{"command", "echo", "log-in", "log-out", "log-timing"}},
	"su":      {opts: "cgGs", long: []string{"command", "group", "supp-group", "shell", "session-command"}, via: true},
	"eval":    {readOnly: true},
}

// shells run a script: the text after -c, else a file or their input.
var shells = []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "rbash", "busybox"}

// maxWrappers bounds the wrappers looked through in one command.
const maxWrappers = 64

// callExpr checks a simple command.
func (a *assessor) callExpr(ce *syntax.CallExpr, depth int) {
	if len(ce.Assigns) > 0 {
		a.notReadOnly(printNode(ce), "sets shell variables")
	}
	if len(ce.Args) > 0 {
		a.run(decodeAll(ce.Args), "", depth)
	}
}

// run checks the command words ws, looking through wrappers.
func (a *assessor) run(ws []word, via string, depth int) {
	for hops := 0; len(ws) > 0; hops++ {
		if hops > maxWrappers {
			a.report(turnapi.RiskDangerous, RuleTooComplex, "command stacks too many wrappers to check", rawPattern(strings.Join(texts(ws), " ")))
			return
		}
		if !ws[0].exact {
			a.report(turnapi.RiskDangerous, RuleDynamicCommand, "cannot tell what runs: the command name is built by the shell ("+short(ws[0].s)+")",
				via+rawPattern(strings.Join(texts(ws), " ")))
			return
		}
		name := baseName(ws[0].s)
		if name == "" {
			return // bash: command not found
		}
		if a.allowlist && strings.Contains(ws[0].s, "/") {
			a.notReadOnly(ws[0].s, "runs "+short(ws[0].s)+", a program named by its path")
		}
		if slices.Contains(shells, name) {
			a.shell(ws, via, depth)
			return
		}
		w, ok := wrappers[name]
		if !ok || name == "command" && len(ws) > 1 && (ws[1].s == "-v" || ws[1].s == "-V") {
			a.rules(&cmd{name: name, args: texts(ws[1:]), exact: exactOf(ws[1:]), via: via, dir: a.dir, depth: depth})
			return
		}
		if !w.readOnly || (name == "time" && hasOpt(texts(ws[1:]), "-o", "--output", "-a", "--append")) {
			a.notReadOnly(rawPattern(strings.Join(texts(ws), " ")), "runs "+name+", which is not known to only read")
		}
		rest, script := a.unwrap(name, w, ws[1:])
		if w.via {
			via += name + " "
		}
		if script != nil {
			if !script.exact {
				a.report(turnapi.RiskDangerous, RuleDynamicCommand, "cannot tell what runs: the script is built by the shell", via+rawPattern(strings.Join(texts(ws), " ")))
				return
			}
			a.script(script.s, depth+1)
			return
		}
		if name == "eval" || name == "watch" {
			a.script(strings.Join(texts(rest), " "), depth+1)
			return
		}
		if name == "xargs" {
			rest = append(rest, unknownWord)
		}
		ws = rest
	}
}

// unwrap skips a wrapper's options (and env's assignments) and returns
// the command it runs, or the script it hands to a shell (-c).
func (a *assessor) unwrap(name string, w wrapper, args []word) (rest []word, script *word) {
	if name == "su" {
		for i := range args {
			if v, _ := optValue(args, i, "-c", "--command", "--session-command"); v.s != "" {
				return nil, &v
			}
		}
		a.notReadOnly("su", "runs a login shell")
		return nil, nil
	}
	i := 0
	for i < len(args) {
		s := args[i].s
		if !args[i].exact && strings.HasPrefix(s, "-") {
			// An option built by the shell may be anything (env -$X).
			a.report(turnapi.RiskDangerous, RuleDynamicCommand, "cannot tell what runs: "+name+"'s options are built by the shell", rawPattern(name+" "+strings.Join(texts(args), " ")))
			return nil, nil
		}
		switch {
		case s == "--":
			i++
			return a.afterOperands(name, w, args[i:]), nil
		case name == "env" && strings.Contains(s, "=") && !strings.HasPrefix(s, "-"):
			a.notReadOnly(s, "sets "+short(s)+" for the command")
			i++
			continue
		case name == "env" && (s == "-S" || strings.HasPrefix(s, "--split-string") || strings.HasPrefix(s, "-S")):
			v, next := optValue(args, i, "-S", "--split-string")
			var split []word
			for _, f := range strings.Fields(v.s) {
				split = append(split, word{s: f, exact: v.exact})
			}
			return append(split, args[next:]...), nil
		case s == "-" || !strings.HasPrefix(s, "-") || len(s) == 1:
			return a.afterOperands(name, w, args[i:]), nil
		}
		v, next := optValue(args, i, w.optNames()...)
		if v.s != "" && (name == "flock" || name == "script") && (isOpt(s, "-c") || isOpt(s, "--command")) {
			return nil, &v
		}
		if v.s != "" && (isOpt(s, "-C") && name == "env" || isOpt(s, "--chdir") || isOpt(s, "-D") && name == "sudo") {
			a.dir = unknownDir
		}
		i = next
	}
	return nil, nil
}

// afterOperands skips the operands a wrapper takes before its command.
func (a *assessor) afterOperands(name string, w wrapper, args []word) []word {
	n := w.operands
	if name == "chroot" {
		a.dir = unknownDir
	}
	return args[min(n, len(args)):]
}

// optNames are the wrapper's options that take a value, spelled out.
func (w wrapper) optNames() []string {
	var out []string
	for _, r := range w.opts {
		out = append(out, "-"+string(r))
	}
	for _, l := range w.long {
		out = append(out, "--"+l)
	}
	return out
}

// optValue reads the option at args[i]: the value of one of names
// (attached, after =, or the next word) and the index after it; an option
// without a value gives an empty word.
func optValue(args []word, i int, names ...string) (word, int) {
	s, exact := args[i].s, args[i].exact
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, "--") && strings.HasPrefix(s, "--"):
			given, v, eq := strings.Cut(s, "=")
			if len(given) > 2 && strings.HasPrefix(n, given) {
				if eq {
					return word{v, exact}, i + 1
				}
				if i+1 < len(args) {
					return args[i+1], i + 2
				}
			}
		case !strings.HasPrefix(n, "--") && strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--"):
			// The first letter of a cluster that takes a value ends it.
			for j := 1; j < len(s); j++ {
				if strings.IndexByte(stripDashes(names), s[j]) < 0 {
					continue
				}
				if s[j] != n[1] {
					break
				}
				if j+1 < len(s) {
					return word{s[j+1:], exact}, i + 1
				}
				if i+1 < len(args) {
					return args[i+1], i + 2
				}
			}
		}
	}
	return word{}, i + 1
}

// stripDashes are the letters of names' short options.
func stripDashes(names []string) string {
	var b strings.Builder
	for _, n := range names {
		if len(n) == 2 && n[0] == '-' {
			b.WriteByte(n[1])
		}
	}
	return b.String()
}

// shell checks a shell: the script after -c is read as a script; a shell
// that reads a file or its input runs what nobody read here.
func (a *assessor) shell(ws []word, via string, depth int) {
	args := ws[1:]
	if baseName(ws[0].s) == "busybox" {
		if len(args) == 0 {
			return
		}
		a.run(args, via, depth)
		return
	}
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "-o" || s == "-O" || s == "+O" || s == "+o":
			i++
		case strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && strings.Contains(s, "c"):
			if i+1 < len(args) {
				if !args[i+1].exact {
					a.report(turnapi.RiskDangerous, RuleDynamicCommand, "cannot tell what runs: the script is built by the shell", via+rawPattern(strings.Join(texts(ws), " ")))
					return
				}
				a.script(args[i+1].s, depth+1)
			}
			return
		case strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+"):
		default:
			// A script file: what it does is not known here.
			a.notReadOnly(rawPattern(strings.Join(texts(ws), " ")), "runs a shell on a script nobody read here")
			return
		}
	}
	if !a.fed {
		a.report(turnapi.RiskDangerous, RuleDynamicCommand, "cannot tell what runs: a shell runs the script on its input",
			via+rawPattern(strings.Join(texts(ws), " ")))
	}
}

// exactOf lists which words are exact.
func exactOf(ws []word) []bool {
	out := make([]bool, len(ws))
	for i, w := range ws {
		out[i] = w.exact
	}
	return out
}

// isOpt reports whether argument s is option name: a short one alone or
// starting a cluster, a long one whole, abbreviated or with =value.
func isOpt(s, name string) bool {
	if strings.HasPrefix(name, "--") {
		given, _, _ := strings.Cut(s, "=")
		return strings.HasPrefix(given, "--") && len(given) > 2 && strings.HasPrefix(name, given)
	}
	return len(s) >= 2 && s[0] == '-' && s[1] != '-' && s[1] == name[1]
}

// hasOpt reports whether args hold one of the options names: a short one
// (-o) anywhere in a cluster or with its value attached, a long one (--out)
// whole, abbreviated (GNU's getopt takes --in-pl for --in-place) or with
// =value, a single-dash word (find's -delete) as it is. Words after "--"
// count too: a program that is not getopt's (find) reads no "--", and
// elsewhere it only makes a command ask more.
func hasOpt(args []string, names ...string) bool {
	return slices.ContainsFunc(args, func(s string) bool {
		return slices.ContainsFunc(names, func(n string) bool {
			switch {
			case strings.HasPrefix(n, "--"):
				return isOpt(s, n)
			case len(n) == 2:
				return strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && strings.IndexByte(s[1:], n[1]) >= 0
			}
			return s == n
		})
	})
}

// operands are the arguments that are not options (all after "--").
func operands(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}
