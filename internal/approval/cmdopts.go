package approval

import (
	"regexp"
	"strings"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Options and settings that make a program run a command: the command
// is Dangerous and, where it is literal, checked as a script.

// runsOption reports a program that runs a command an option names.
func (a *assessor) runsOption(c *cmd, what, text string, isShell bool) {
	a.danger(c, RuleInlineCode, c.name+" runs a command ("+short(what)+")")
	if isShell && text != "" {
		a.shellText(c.call, text)
	}
}

// optValues are the values of the named options, given as "-x V", "-xV",
// "--long V" or "--long=V".
func optValues(args []string, names ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			break
		}
		for _, n := range names {
			switch {
			case args[i] == n && i+1 < len(args):
				out = append(out, args[i+1])
			case strings.HasPrefix(n, "--") && strings.HasPrefix(args[i], n+"="):
				out = append(out, args[i][len(n)+1:])
			case len(n) == 2 && n[0] == '-' && n[1] != '-' && len(args[i]) > 2 && strings.HasPrefix(args[i], n) && args[i][1] != '-':
				out = append(out, args[i][2:])
			}
		}
	}
	return out
}

// gdb -ex, -iex, --eval-command: "!CMD" and "shell CMD" run a shell.
func (a *assessor) gdb(c *cmd) {
	for i, arg := range c.args {
		if arg == "--args" || arg == "-args" {
			f := make([]field, 0, len(c.args)-i-1)
			for j := i + 1; j < len(c.args); j++ {
				f = append(f, field{s: c.args[j], lit: c.lits[j]})
			}
			if len(f) > 0 {
				a.shellText(c.call, joinWords(f))
			}
			break
		}
	}
	for _, v := range optValues(c.args, "-ex", "-iex", "--eval-command", "-eval-command", "--init-eval-command") {
		if gdbPlain(v) {
			continue
		}
		a.runsOption(c, "gdb -ex "+v, shellEscape(v, "!", "shell ", "pipe ", "|"), true)
	}
}

// gdbPlain reports gdb commands that only run, step or inspect the
// program being debugged.
func gdbPlain(v string) bool {
	f := strings.Fields(v)
	if len(f) == 0 {
		return true
	}
	switch f[0] {
	case "run", "r", "bt", "backtrace", "where", "info", "i", "quit", "q", "continue", "c", "next", "n", "step",
		"s", "finish", "break", "b", "tbreak", "frame", "f", "list", "l", "disassemble", "up", "down", "kill", "start",
		"thread", "watch", "delete", "d", "display", "x", "catch":
		return !strings.ContainsAny(v, "$!|`") && (f[0] != "thread" || !strings.Contains(v, "apply") || strings.HasSuffix(v, " bt") || strings.HasSuffix(v, " backtrace"))
	case "set":
		return len(f) > 1 && (f[1] == "pagination" || f[1] == "confirm" || f[1] == "print" || f[1] == "width" || f[1] == "height" || f[1] == "logging" && !strings.Contains(v, "file"))
	}
	return false
}

// shellEscape is the shell command after one of the prefixes, or "".
func shellEscape(v string, prefixes ...string) string {
	t := strings.TrimLeft(strings.TrimSpace(v), ":")
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(t, p); ok {
			return rest
		}
	}
	return ""
}

// editor: vim -c CMD, --cmd CMD, +CMD; emacs --eval.
func (a *assessor) editor(c *cmd) {
	if strings.Contains(c.name, "emacs") {
		for _, v := range optValues(c.args, "--eval", "-eval", "--execute", "-l", "--load", "-f", "--funcall") {
			a.runsOption(c, c.name+" --eval "+v, "", false)
		}
		return
	}
	vals := optValues(c.args, "-c", "--cmd", "-S")
	for _, arg := range c.args {
		if v, ok := strings.CutPrefix(arg, "+"); ok && v != "" && strings.Trim(v, "0123456789") != "" && !strings.HasPrefix(v, "/") {
			vals = append(vals, v)
		}
	}
	for _, v := range vals {
		a.runsOption(c, c.name+" -c "+v, shellEscape(v, "!", "r !", "r!", "w !", "w!", "call system(", "term "), true)
	}
}

// pager: less +CMD runs less commands, and "!cmd" or "|cmd" among them
// run a shell.
func (a *assessor) pager(c *cmd) {
	for _, arg := range c.args {
		if v, ok := strings.CutPrefix(arg, "+"); ok && strings.ContainsAny(v, "!|") {
			i := strings.IndexAny(v, "!|")
			a.runsOption(c, c.name+" +"+v, strings.TrimPrefix(v[i+1:], "$"), true)
		}
	}
}

// man -P/-H/--pager/--html run a pager or browser command.
func (a *assessor) man(c *cmd) {
	for _, v := range optValues(c.args, "-P", "--pager", "-H", "--html") {
		if v != "cat" && v != "less" && v != "more" {
			a.runsOption(c, "man -P "+v, v, true)
		}
	}
}

// sqlProgram matches COPY ... FROM/TO PROGRAM 'cmd' (psql \copy too).
var sqlProgram = regexp.MustCompile(`(?i)\bcopy\b.*\bprogram\s+'((?:[^']|'')*)'`)

// sqliteShell: the sqlite3 dot-commands .shell and .system run a shell;
// psql's \! does too.
func (a *assessor) sqlShell(c *cmd) {
	texts := append([]string{c.stdin}, c.args...)
	for _, t := range texts {
		for _, line := range strings.Split(t, "\n") {
			line = strings.TrimSpace(line)
			for _, p := range []string{".shell", ".system", `\!`} {
				if rest, ok := strings.CutPrefix(line, p); ok {
					a.runsOption(c, c.name+" "+line, strings.TrimSpace(rest), true)
				}
			}
			if rest, ok := strings.CutPrefix(line, "system "); ok && (c.name == "mysql" || c.name == "mariadb") {
				a.runsOption(c, c.name+" "+line, strings.TrimSpace(rest), true)
			}
			low := strings.ToLower(line)
			if strings.HasPrefix(low, ".load ") || strings.Contains(low, "load_extension") {
				a.runsOption(c, c.name+" "+line, "", false)
			}
			if m := sqlProgram.FindStringSubmatch(line); m != nil {
				a.runsOption(c, c.name+" "+line, strings.ReplaceAll(m[1], "''", "'"), true)
			}
			for _, p := range []string{".output ", ".once ", ".save ", ".backup ", `\o `, `\copy `} {
				if rest, ok := strings.CutPrefix(line, p); ok && !strings.HasPrefix(p, `\copy`) {
					f := strings.Trim(strings.TrimSpace(rest), `'"`)
					if strings.HasPrefix(f, "|") {
						a.runsOption(c, c.name+" "+line, f[1:], true)
					} else if f != "" {
						a.writeTarget(c.sc.resolve(f), c.name+" "+strings.TrimSpace(p), c.pattern(), false)
					}
				}
			}
		}
	}
}

// expect -c runs Tcl, which may spawn or exec anything.
func (a *assessor) expect(c *cmd) {
	for _, v := range optValues(c.args, "-c") {
		a.runsOption(c, "expect -c "+v, "", false)
	}
}

// tmuxRuns are the tmux commands whose last operands are a shell command.
var tmuxRuns = map[string]bool{"new": true, "new-session": true, "new-window": true, "neww": true,
	"split-window": true, "splitw": true, "run-shell": true, "run": true, "respawn-pane": true, "respawnp": true,
	"respawn-window": true, "respawnw": true, "display-popup": true, "popup": true, "pipe-pane": true, "pipep": true}

// tmux new CMD, split-window CMD, run-shell CMD ... run CMD through a
// shell; send-keys types into one.
func (a *assessor) tmux(c *cmd) {
	args := c.args
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if args[i] == "-L" || args[i] == "-S" || args[i] == "-f" || args[i] == "-c" || args[i] == "-T" {
			if args[i] == "-c" && i+1 < len(args) {
				a.runsOption(c, "tmux -c", args[i+1], true)
			}
			i++
		}
		i++
	}
	if i >= len(args) {
		return
	}
	sub, rest := args[i], args[i+1:]
	switch {
	case tmuxRuns[sub]:
		k := 0
		for k < len(rest) && strings.HasPrefix(rest[k], "-") && rest[k] != "--" {
			if strings.ContainsAny(rest[k][len(rest[k])-1:], "cesntFxylpwhbdTSR") && len(rest[k]) == 2 && strings.ContainsAny(rest[k][1:], "cesntFxylpwTSR") {
				k++
			}
			k++
		}
		if k < len(rest) && rest[k] == "--" {
			k++
		}
		if k < len(rest) {
			a.runsOption(c, "tmux "+sub, strings.Join(rest[k:], " "), true)
		}
	case sub == "send-keys" || sub == "send":
		a.runsOption(c, "tmux send-keys", "", false)
	}
}

// screen -X stuff types into a window; screen CMD runs CMD.
func screen(a *assessor, base call, args []field) ([]field, bool) {
	takes := map[string]bool{"-S": true, "-c": true, "-e": true, "-h": true, "-p": true, "-s": true, "-T": true,
		"-t": true, "-Logfile": true, "-X": true, "-r": true, "-R": true, "-x": true, "-d": false}
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "-X":
			a.report(turnapi.RiskDangerous, RuleInlineCode, "screen -X sends a command to a session", "screen "+joinWords(args))
			return nil, false
		case strings.HasPrefix(s, "-"):
			if takes[s] || len(s) > 2 && takes["-"+s[len(s)-1:]] { // -dmS NAME
				i++
			}
		default:
			return args[i:], true
		}
	}
	return nil, false
}

// sshOptions: ssh -o ProxyCommand=CMD, LocalCommand=CMD ... run CMD
// locally; scp/sftp -S PROGRAM runs PROGRAM.
func (a *assessor) sshOptions(base call, name string, args []string) {
	c := &cmd{call: base, name: name, args: args}
	for _, v := range optValues(args, "-o") {
		key, val, ok := strings.Cut(v, "=")
		if !ok {
			key, val, _ = strings.Cut(strings.TrimSpace(v), " ")
		}
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "proxycommand", "localcommand", "knownhostscommand", "permitlocalcommand", "proxyjump", "remotecommand":
			if strings.ToLower(strings.TrimSpace(key)) == "proxyjump" || strings.ToLower(strings.TrimSpace(key)) == "permitlocalcommand" {
				continue
			}
			a.runsOption(c, name+" -o "+key, strings.TrimSpace(val), true)
		}
	}
	if name == "scp" || name == "sftp" {
		for _, v := range optValues(args, "-S") {
			a.runsOption(c, name+" -S "+v, "", false)
		}
	}
}

func (a *assessor) scp(c *cmd) { a.sshOptions(c.call, c.name, c.args) }

// zip -T -TT CMD tests the archive with CMD.
func (a *assessor) zip(c *cmd) {
	for _, v := range optValues(c.args, "-TT", "--unzip-command") {
		a.runsOption(c, "zip -TT "+v, v, true)
	}
}

// at and batch run the commands they read later.
func (a *assessor) at(c *cmd) {
	for _, arg := range c.args {
		if arg == "-l" || arg == "-r" || arg == "-d" || arg == "-c" {
			return
		}
	}
	a.danger(c, RuleInlineCode, c.name+" schedules commands")
	if c.hasStdin {
		a.script(c.stdin, c.sc, c.depth+1)
	}
}

// crontabInstall: crontab FILE or crontab - installs a crontab.
func (a *assessor) crontabInstall(c *cmd) {
	p := opts{short: "u"}.parse(c.args)
	if len(p.operands) == 0 || p.has("-l", "-r", "-e", "-i") {
		return
	}
	a.danger(c, RuleInlineCode, "installs a crontab (crontab "+short(p.operands[0])+")")
	if p.operands[0] == "-" && c.hasStdin {
		for _, line := range strings.Split(c.stdin, "\n") {
			f := strings.Fields(line)
			if len(f) > 5 && !strings.HasPrefix(f[0], "#") {
				a.script(strings.Join(f[5:], " "), c.sc, c.depth+1)
			}
		}
	}
}

// runsVars are environment variables whose value a program runs or
// loads; harmless values of the pagers are allowed.
var runsVars = map[string]bool{"GIT_PAGER": true, "GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_EXTERNAL_DIFF": true,
	"GIT_EDITOR": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true, "GIT_PROXY_COMMAND": true, "GIT_CONFIG_PARAMETERS": true,
	"PAGER": true, "MANPAGER": true, "SYSTEMD_PAGER": true, "LESSOPEN": true, "LESSCLOSE": true, "BASH_ENV": true, "ENV": true,
	"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "PROMPT_COMMAND": true, "PERL5OPT": true,
	"NODE_OPTIONS": true, "PYTHONSTARTUP": true, "RUBYOPT": true, "EDITOR": true, "VISUAL": true, "BROWSER": true,
	"GIT_SEQUENCE_EDITOR": true, "SUDO_ASKPASS": true, "FCEDIT": true, "GIT_CONFIG_GLOBAL": true,
	"GIT_CONFIG_SYSTEM": true, "GIT_CONFIG": true, "GIT_TEMPLATE_DIR": true, "GIT_EXEC_PATH": true,
	"npm_config_script_shell": true, "NPM_CONFIG_SCRIPT_SHELL": true, "JAVA_TOOL_OPTIONS": true,
	"_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true, "DYLD_INSERT_LIBRARIES": true, "GCONV_PATH": true,
	"RUSTC_WRAPPER": true, "CARGO_BUILD_RUSTC_WRAPPER": true}

// loadsVars are runsVars whose value names files or options to load, not
// a command.
var loadsVars = map[string]bool{"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "PERL5OPT": true,
	"NODE_OPTIONS": true, "RUBYOPT": true, "GIT_CONFIG_PARAMETERS": true, "BASH_ENV": true, "ENV": true,
	"PYTHONSTARTUP": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_CONFIG": true,
	"GIT_TEMPLATE_DIR": true, "GIT_EXEC_PATH": true, "JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true,
	"JDK_JAVA_OPTIONS": true, "DYLD_INSERT_LIBRARIES": true, "GCONV_PATH": true}

// isRunsVar reports runsVars and the families of them: git's
// GIT_CONFIG_VALUE_n (a configuration value such as core.pager) and
// cargo's CARGO_TARGET_<triple>_RUNNER.
func isRunsVar(name string) bool {
	return runsVars[name] || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") ||
		strings.HasPrefix(name, "CARGO_TARGET_") && strings.HasSuffix(name, "_RUNNER")
}

// harmlessValues are the values of runsVars that run nothing new.
var harmlessValues = map[string]bool{"": true, "cat": true, "less": true, "less -R": true, "less -FRX": true,
	"more": true, "true": true, "vi": true, "vim": true, "nano": true, "code --wait": true, "code -w": true,
	"nvim": true, "emacs": true, "emacs -nw": true, "micro": true, "hx": true, "less -S": true, "less -r": true,
	"delta": true, "bat": true, "most": true}

// picksWhatRuns reports variables that change which program runs or what
// it loads: PATH and HOME (whose configuration files name programs), the
// compilers and build flags, git's, Go's and the dynamic loader's.
func picksWhatRuns(name string) bool {
	switch name {
	case "PATH", "HOME", "SHELL", "CC", "CXX", "CPP", "AR", "AS", "LD", "MAKEFLAGS", "MFLAGS", "PYTHONPATH", "NODE_PATH",
		"RUBYLIB", "PERL5LIB", "PERLLIB", "CDPATH", "IFS":
		return true
	}
	for _, p := range []string{"GIT_", "LD_", "GO", "XDG_", "CARGO_", "RUSTC", "NPM_", "npm_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// runsVar checks NAME=value that makes programs run or load value.
func (a *assessor) runsVar(name, value string, lit bool, sc *scope, depth int) {
	if a.allowlist && (picksWhatRuns(name) || isRunsVar(name)) {
		// Outside the sandbox a name that picks what runs is not known
		// to only read, whatever its value.
		a.report(turnapi.RiskDangerous, RuleNotReadOnly, "sets "+name+", which picks what programs run or load (outside the sandbox it asks)", name+"="+value)
	}
	if !isRunsVar(name) || lit && harmlessValues[value] && !strings.HasPrefix(name, "LD_") {
		return
	}
	a.report(turnapi.RiskDangerous, RuleInlineCode, "sets "+name+", which makes programs run or load it ("+short(value)+")", name+"="+value)
	switch {
	case loadsVars[name]:
	default:
		if lit && depth < maxDepth {
			a.script(strings.TrimPrefix(value, "|"), sc, depth+1)
		}
	}
}

// gitExt runs the command of a git ext:: URL: words split at spaces, "% "
// a space within a word, "%%" a percent sign.
func (a *assessor) gitExt(c *cmd, v string) {
	var words []field
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '%' && i+1 < len(v):
			i++
			if v[i] == ' ' || v[i] == '%' {
				b.WriteByte(v[i])
			}
		case v[i] == ' ':
			if b.Len() > 0 {
				words = append(words, field{s: b.String(), lit: true})
				b.Reset()
			}
		default:
			b.WriteByte(v[i])
		}
	}
	if b.Len() > 0 {
		words = append(words, field{s: b.String(), lit: true})
	}
	if c.depth >= maxDepth {
		a.tooDeep = true
		return
	}
	base := c.call
	base.depth++
	a.run(base, words)
}
