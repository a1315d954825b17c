package approval

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// wrapper removes a program that runs another: it returns the command it
// runs, or false when it runs none or has checked a script it runs itself.
type wrapper func(a *assessor, base call, args []field) ([]field, bool)

var wrappers map[string]wrapper

// Option grammars of the wrappers.
var (
	sudoOpts = opts{short: "CDgpRrtTUu", long: longs("askpass", "background", "bell", "close-from=", "chdir=",
		"preserve-env", "edit", "group=", "set-home", "help", "host=", "login", "remove-timestamp",
		"reset-timestamp", "list", "non-interactive", "preserve-groups", "prompt=", "chroot=", "role=",
		"stdin", "shell", "type=", "command-timeout=", "other-user=", "user=", "version", "validate")}
	doasOpts    = opts{short: "uC"}
	setsidOpts  = opts{long: longs("ctty", "fork", "wait")}
	timeOpts    = opts{short: "fo", long: longs("format=", "output=", "append", "portability", "verbose", "quiet")}
	execOpts    = opts{short: "a"}
	niceOpts    = opts{short: "n", long: longs("adjustment=")}
	ioniceOpts  = opts{short: "cnpPu", long: longs("class=", "classdata=", "pid=", "pgid=", "uid=", "ignore")}
	stdbufOpts  = opts{short: "ioe", long: longs("input=", "output=", "error=")}
	timeoutOpts = opts{short: "sk", long: longs("signal=", "kill-after=", "preserve-status", "foreground", "verbose")}
	xargsOpts   = opts{short: "adEILnPs", long: longs("arg-file=", "delimiter=", "eof=", "replace=", "max-lines=",
		"max-args=", "max-procs=", "max-chars=", "process-slot-var=", "null", "interactive", "no-run-if-empty",
		"open-tty", "exit", "verbose", "show-limits")}
	envOpts = opts{short: "uCSPa", long: longs("ignore-environment", "null", "unset=", "chdir=", "split-string=",
		"block-signal", "default-signal", "ignore-signal", "list-signal-handling", "debug", "argv0=")}
	watchOpts = opts{short: "nq", long: longs("interval=", "differences", "no-title", "beep", "errexit", "chgexit",
		"color", "no-color", "exec", "precise", "no-wrap", "equexit=", "no-rerun", "shotsdir=")}
	chrootOpts = opts{long: longs("userspec=", "groups=", "skip-chdir")}
	flockOpts  = opts{short: "wEc", long: longs("shared", "exclusive", "unlock", "nonblock", "nb", "timeout=", "wait=",
		"conflict-exit-code=", "close", "no-fork", "verbose", "command=")}
	scriptOpts = opts{short: "cEmoTBIO", long: longs("append", "command=", "echo=", "return", "flush", "force", "quiet",
		"timing", "log-timing=", "log-in=", "log-out=", "log-io=", "logging-format=", "output-limit=")}
	suOpts = opts{short: "csgGwu", permute: true, long: longs("command=", "session-command=", "shell=", "group=",
		"supp-group=", "login", "preserve-environment", "fast", "pty", "whitelist-environment=")}
	taskOpts   = opts{short: "", long: longs("all-tasks", "pid", "cpu-list")}
	straceOpts = opts{short: "abeEIoOpPsSuUX"}
	sshOpts    = opts{short: "BbcDEeFIiJLlmOopQRSWw", permute: false}
	unshare    = opts{long: longs("mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time", "fork", "map-root-user",
		"map-current-user", "propagation=", "setgroups=", "root=", "wd=", "kill-child", "mount-proc")}
	parallelOpts = opts{short: "jSadEINLPn", long: longs("jobs=", "sshlogin=", "arg-file=", "delimiter=", "eof=", "replace=",
		"max-args=", "max-lines=", "joblog=", "results=", "tmpdir=", "workdir=", "colsep=", "env=", "timeout=",
		"retries=", "sshloginfile=", "basefile=", "transferfile=", "return=", "tagstring=", "halt=", "delay=",
		"memfree=", "load=", "nice=", "keep-order", "group", "ungroup", "line-buffer", "dry-run", "progress",
		"bar", "eta", "verbose", "null", "tag", "pipe", "quote", "no-notice", "will-cite")}
)

func init() {
	wrappers = map[string]wrapper{
		"sudo": sudo,
		"sudoedit": func(a *assessor, base call, args []field) ([]field, bool) {
			return sudo(a, base, append([]field{{s: "-e", lit: true}}, args...))
		},
		"doas":     skipping(doasOpts),
		"nohup":    skipping(opts{}),
		"builtin":  skipping(opts{}),
		"busybox":  skipping(opts{}),
		"unbuffer": skipping(opts{}),
		"setsid":   skipping(setsidOpts),
		"time":     skipping(timeOpts),
		"exec":     skipping(execOpts),
		"nice":     skipping(niceOpts),
		"ionice":   skipping(ioniceOpts),
		"stdbuf":   skipping(stdbufOpts),
		"strace":   skipping(straceOpts),
		"ltrace":   skipping(straceOpts),
		"unshare":  skipping(unshare),
		"nsenter":  skipping(opts{short: "tSG", long: longs("target=", "setuid=", "setgid=", "all", "mount", "uts", "ipc", "net", "pid", "user", "root=", "wd=")}),
		"systemd-run": skipping(opts{short: "pEMH", long: longs("unit=", "property=", "description=", "slot=",
			"uid=", "gid=", "working-directory=", "setenv=", "machine=", "host=", "user", "scope", "wait", "pty", "pipe", "quiet", "collect")}),
		"runuser":  suLike,
		"su":       suLike,
		"command":  commandBuiltin,
		"timeout":  operandThen(timeoutOpts, 1),
		"taskset":  operandThen(taskOpts, 1),
		"chroot":   operandThen(chrootOpts, 1),
		"chrt":     operandThen(opts{short: ""}, 1),
		"xargs":    xargs,
		"env":      env,
		"watch":    watch,
		"flock":    flock,
		"script":   scriptCmd,
		"parallel": parallel,
		"eval":     eval,
		"trap":     trap,
		"ssh":      ssh,
		"alias":    alias,
		"screen":   screen,
	}
	addRunners()
	known = append(sortedKeys(handlers), sortedKeys(wrappers)...)
}

// known lists the program names with rules or wrappers.
var known []string

// knownNames lists the programs with rules, for matching a command word
// that is a pattern (/bin/r? -rf /).
func knownNames() []string { return known }

// strs returns the text of fields.
func strs(f []field) []string {
	out := make([]string, len(f))
	for i := range f {
		out[i] = f[i].s
	}
	return out
}

// skipping is a wrapper whose command follows its options.
func skipping(o opts) wrapper {
	return operandThen(o, 0)
}

// operandThen is a wrapper whose command follows its options and n
// operands (timeout DURATION, chroot DIR).
func operandThen(o opts, n int) wrapper {
	return func(_ *assessor, _ call, args []field) ([]field, bool) {
		p := o.parse(strs(args))
		if len(p.index) <= n {
			return nil, false
		}
		return args[p.index[n]:], true
	}
}

// shellText checks a script a program hands to a shell; a script built
// from a download runs that download.
func (a *assessor) shellText(base call, src string) {
	// Another process: a cd in it does not move this shell.
	cwd := base.sc.cwd
	a.evalText(base, src)
	base.sc.cwd = cwd
}

// evalText checks a script this shell runs itself (eval).
func (a *assessor) evalText(base call, src string) {
	if base.subsDownload {
		a.report(turnapi.RiskDangerous, RuleCurlPipeShell, "runs a downloaded script (sh -c \"$(curl ...)\")", "sh -c "+rawPattern(src))
	}
	a.script(src, base.sc, base.depth+1)
}

// joinWords joins fields back into shell text, quoting each word so the
// text means what the fields did.
func joinWords(f []field) string {
	parts := make([]string, len(f))
	for i := range f {
		q, err := syntax.Quote(f[i].s, syntax.LangBash)
		if err != nil {
			q = unknownSubst
		}
		parts[i] = q
	}
	return strings.Join(parts, " ")
}

// joinScript joins fields into the script a shell would run: the words are
// concatenated with spaces and parsed again, as eval and ssh do.
func joinScript(f []field) string {
	return strings.Join(strs(f), " ")
}

// builtOptions reports a wrapper option the shell builds (-$X, whose
// unknown value stays "$X" in the field, or a glob such as -*): it may
// expand to any options, and options decide what the wrapper runs.
func (a *assessor) builtOptions(wrapper string, consumed []field) {
	for _, f := range consumed {
		if strings.HasPrefix(f.s, "-") && (f.glob || !f.lit && strings.Contains(f.s, "$")) {
			a.report(turnapi.RiskDangerous, RuleDynamicCommand, "cannot tell what runs: an option of "+wrapper+" is built by the shell ("+short(f.s)+")",
				wrapper+" "+rawPattern(f.s))
			return
		}
	}
}

// sudo runs its command after its options and NAME=value operands; with
// -e (sudoedit) it edits the files it names.
func sudo(a *assessor, base call, args []field) ([]field, bool) {
	p := sudoOpts.parse(strs(args))
	if p.has("-e", "--edit") {
		return nil, false // sudoedit: it asks outside the sandbox, and cannot gain root inside
	}
	k := 0
	for k < len(p.operands) && isAssignment(p.operands[k]) {
		name, v, _ := strings.Cut(p.operands[k], "=")
		a.runsVar(name, v, args[p.index[k]].lit, base.sc, base.depth)
		k++
	}
	if k >= len(p.index) {
		return nil, false
	}
	return args[p.index[k]:], true
}

// commandBuiltin: "command -v x" only prints; otherwise it runs x.
func commandBuiltin(_ *assessor, _ call, args []field) ([]field, bool) {
	p := opts{}.parse(strs(args))
	if p.has("-v", "-V") || len(p.index) == 0 {
		return nil, false
	}
	return args[p.index[0]:], true
}

// suLike: su and runuser run "-c CMD" with a shell; runuser -u U runs a
// command.
func suLike(a *assessor, base call, args []field) ([]field, bool) {
	p := suOpts.parse(strs(args))
	for _, f := range []string{"-c", "--command", "--session-command"} {
		for _, s := range p.values[f] {
			a.shellText(base, s)
		}
	}
	if _, ok := p.value("-u"); ok && len(p.index) > 0 && !p.has("-c", "--command") {
		return args[p.index[0]:], true
	}
	return nil, false
}

func xargs(_ *assessor, _ call, args []field) ([]field, bool) {
	p := xargsOpts.parse(strs(args))
	if len(p.index) == 0 {
		return nil, false // echo
	}
	return args[p.index[0]:], true
}

// env runs its command after NAME=value operands; -S splits a string into
// more words.
func env(a *assessor, base call, args []field) ([]field, bool) {
	if len(args) > 0 && args[0].s == "-" {
		args = args[1:] // "env -" is env -i
	}
	p := envOpts.parse(strs(args))
	k := 0
	for k < len(p.operands) && (isAssignment(p.operands[k]) || p.operands[k] == "-") {
		name, v, _ := strings.Cut(p.operands[k], "=")
		a.runsVar(name, v, args[p.index[k]].lit, base.sc, base.depth)
		k++
	}
	if s, ok := p.value("-S", "--split-string"); ok {
		rest := ""
		if k < len(p.operands) {
			rest = " " + joinWords(args[p.index[k]:])
		}
		a.shellText(base, s+rest)
		return nil, false
	}
	if k >= len(p.index) {
		return nil, false
	}
	return args[p.index[k]:], true
}

// isAssignment reports whether w is a NAME=value word.
func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := w[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// watch runs its command with "sh -c" unless -x is given.
func watch(a *assessor, base call, args []field) ([]field, bool) {
	p := watchOpts.parse(strs(args))
	if len(p.index) == 0 {
		return nil, false
	}
	if p.has("-x", "--exec") {
		return args[p.index[0]:], true
	}
	a.shellText(base, joinScript(args[p.index[0]:]))
	return nil, false
}

// flock FILE -c CMD or flock FILE CMD ARGS.
func flock(a *assessor, base call, args []field) ([]field, bool) {
	p := flockOpts.parse(strs(args))
	if s, ok := p.value("-c", "--command"); ok {
		a.shellText(base, s)
		return nil, false
	}
	if len(p.index) < 2 {
		return nil, false
	}
	if next := p.operands[1]; next == "-c" || next == "--command" {
		if len(p.operands) > 2 {
			a.shellText(base, p.operands[2])
		}
		return nil, false
	}
	return args[p.index[1]:], true
}

// scriptCmd: script -c CMD runs CMD with a shell.
func scriptCmd(a *assessor, base call, args []field) ([]field, bool) {
	p := scriptOpts.parse(strs(args))
	if s, ok := p.value("-c", "--command"); ok {
		a.shellText(base, s)
	}
	return nil, false
}

// maxInputs bounds the inputs of parallel checked one by one.
const maxInputs = 16

// parallel runs its command through a shell once per input; without a
// command each input is a command.
func parallel(a *assessor, base call, args []field) ([]field, bool) {
	p := parallelOpts.parse(strs(args))
	var command, inputs []string
	sep := false
	for _, o := range p.operands {
		switch {
		case o == ":::" || o == "::::" || o == ":::+" || o == "::::+":
			sep = true
		case sep:
			inputs = append(inputs, o)
		default:
			command = append(command, o)
		}
	}
	text := strings.Join(command, " ")
	if text != "" {
		a.shellText(base, text)
	}
	for i, in := range inputs {
		if i == maxInputs {
			break
		}
		switch {
		case text == "":
			a.shellText(base, in)
		case strings.Contains(text, "{}"):
			a.shellText(base, strings.ReplaceAll(text, "{}", in))
		default:
			a.shellText(base, text+" "+in)
		}
	}
	return nil, false
}

// eval runs its arguments joined as a script.
func eval(a *assessor, base call, args []field) ([]field, bool) {
	a.evalText(base, joinScript(args))
	return nil, false
}

// trap runs its first argument as a script when a signal comes.
func trap(a *assessor, base call, args []field) ([]field, bool) {
	s := strs(args)
	if len(s) > 0 && s[0] == "--" {
		s = s[1:]
	}
	if len(s) == 0 || s[0] == "-" || (strings.HasPrefix(s[0], "-") && len(s[0]) == 2) {
		return nil, false
	}
	a.shellText(base, s[0])
	return nil, false
}

// alias NAME=TEXT defines TEXT as a command; it is checked as if it ran.
func alias(a *assessor, base call, args []field) ([]field, bool) {
	for _, f := range args {
		if _, text, ok := strings.Cut(f.s, "="); ok {
			a.shellText(base, text)
		}
	}
	return nil, false
}

// ssh HOST CMD runs CMD with the remote user's shell.
func ssh(a *assessor, base call, args []field) ([]field, bool) {
	a.sshOptions(base, "ssh", strs(args))
	p := sshOpts.parse(strs(args))
	if len(p.index) < 2 {
		return nil, false
	}
	a.shellText(base, joinScript(args[p.index[1]:]))
	return nil, false
}
