package approval

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// shellCmd: a shell runs "-c SCRIPT", a script file, or its stdin.
func (a *assessor) shellCmd(c *cmd) {
	c.info.lang = "sh"
	script, cmdMode, stdin, file := shellOptions(c.args)
	if cmdMode {
		child := c.call
		if rest := c.args[min(scriptIndex(c.args, script)+1, len(c.args)):]; len(rest) > 0 {
			child.sc = c.sc.withArgs(rest)
		}
		a.shellText(child, script)
		return
	}
	c.info.readsStdin = stdin
	if stdin && c.hasStdin {
		a.script(c.stdin, c.sc, c.depth+1)
	}
	a.runsFile(c, file)
}

// runsFile reports an interpreter or shell given a download as its
// program, and checks a program given as <(...).
func (a *assessor) runsFile(c *cmd, file string) {
	if isNetworkPath(file) {
		a.report(turnapi.RiskDangerous, RuleCurlPipeShell, "runs a program read from the network ("+c.name+" "+short(file)+")", c.pattern())
	}
	if _, proc := c.sc.procs[file]; !proc && isDescriptorPath(file) {
		a.danger(c, RuleDecodeExec, "runs a program read from an open file descriptor ("+c.name+" "+short(file)+")")
	}
	switch {
	case c.subsDownload:
		a.report(turnapi.RiskDangerous, RuleCurlPipeShell, "runs a downloaded script ("+c.name+" <(curl ...))", c.pattern())
	case file != "" && c.sc.downloaded[path.Clean(file)]:
		a.report(turnapi.RiskDangerous, RuleCurlPipeShell, "runs a file it downloaded ("+c.name+" "+short(file)+")", c.pattern())
	}
	out, ok := c.sc.procs[file]
	if !ok && file != "" {
		out, ok = c.sc.written[path.Clean(c.sc.resolve(file))]
	}
	if ok {
		switch {
		case !out.ok:
			a.danger(c, RuleDecodeExec, "runs the output of a command as a program ("+c.name+" <(...))")
		case c.info.lang == "sh":
			a.script(out.text, c.sc, c.depth+1)
		default:
			a.inlineCode(c, c.info.lang, out.text)
		}
	}
}

// scriptIndex finds the script of "sh -c SCRIPT ARG0 ARGS..." among the
// arguments; len(args) when it is not one of them.
func scriptIndex(args []string, script string) int {
	for i, arg := range args {
		if arg == script || arg == "--command="+script {
			return i
		}
	}
	return len(args)
}

// shellOptions reads a shell's options: with -c it returns the script;
// otherwise stdin reports whether the shell reads its script from stdin,
// and file names the script file it runs.
func shellOptions(args []string) (script string, cmdMode, stdin bool, file string) {
	i := 0
	sMode := false
	for i < len(args) {
		arg := args[i]
		if arg == "--" || arg == "-" {
			i++
			break
		}
		if arg == "-o" || arg == "+o" || arg == "-O" || arg == "+O" || arg == "--rcfile" || arg == "--init-file" || arg == "-C" || arg == "--init-command" {
			i += 2
			continue
		}
		if s, ok := strings.CutPrefix(arg, "--command="); ok {
			return s, true, false, ""
		}
		if arg == "--command" {
			cmdMode = true
			i++
			continue
		}
		if len(arg) > 1 && (arg[0] == '-' || arg[0] == '+') {
			if arg[0] == '-' && arg[1] != '-' {
				cmdMode = cmdMode || strings.IndexByte(arg, 'c') > 0
				sMode = sMode || strings.IndexByte(arg, 's') > 0
			}
			i++
			continue
		}
		break
	}
	if cmdMode {
		if i < len(args) {
			return args[i], true, false, ""
		}
		return "", true, false, ""
	}
	if sMode || i >= len(args) || isStdinPath(args[i]) {
		return "", false, true, ""
	}
	return "", false, false, args[i]
}

// source runs a file in the current shell.
func (a *assessor) source(c *cmd) {
	c.info.lang = "sh"
	p := (opts{}).parse(c.args)
	if len(p.operands) == 0 || isStdinPath(p.operands[0]) {
		c.info.readsStdin = true
		if c.hasStdin {
			a.script(c.stdin, c.sc, c.depth+1)
		}
		return
	}
	a.runsFile(c, p.operands[0])
}

// language is the family of an interpreter: "python", "perl", "ruby",
// "node", "php" or its own name.
func language(name string) string {
	for _, l := range []string{"python", "perl", "ruby", "node", "php"} {
		if strings.HasPrefix(name, l) {
			return l
		}
	}
	switch name {
	case "pypy", "pypy3":
		return "python"
	case "nodejs", "deno", "bun":
		return "node"
	}
	return name
}

// codeFlags are the options that take inline code, per language.
var codeFlags = map[string]string{"python": "c", "perl": "eE", "ruby": "e", "node": "ep", "php": "rBRE", "lua": "e", "osascript": "e",
	"luajit": "e", "Rscript": "e", "R": "e", "julia": "eE", "pwsh": "c", "powershell": "c"}

// argFlags are the options that take an argument other than code.
var argFlags = map[string]string{"python": "WXm", "perl": "MmIlx0", "ruby": "rICEKTWx", "node": "r", "php": "cdfzt", "lua": "l"}

// interpreter: inline code (python -c, perl -e, node -e ...) that writes,
// deletes or runs commands, or cannot be read, is Dangerous; a program on
// stdin is checked when it is known; a script file is judged by name only.
func (a *assessor) interpreter(c *cmd) {
	lang := language(c.name)
	c.info.lang = lang
	args := c.args
	if (c.name == "deno" || c.name == "bun") && len(args) > 0 && args[0] == "eval" {
		args = append([]string{"-e"}, args[1:]...)
	}
	if c.name == "pwsh" || c.name == "powershell" {
		args = slices.Clone(args)
		for i, arg := range args {
			switch strings.ToLower(arg) {
			case "-command", "-c", "/c", "-encodedcommand", "-enc", "-e", "-ec", "-commandwithargs", "-cwa":
				args[i] = "-c"
			}
		}
	}
	var code []string
	codeLit := true
	var operands []string
	module := ""
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" || arg == "-" || len(arg) < 2 || arg[0] != '-' {
			operands = args[i:]
			if arg == "--" {
				operands = args[i+1:]
			}
			break
		}
		if strings.HasPrefix(arg, "--") {
			name, v, hasV := strings.Cut(arg[2:], "=")
			switch name {
			case "eval", "print", "command":
				if !hasV && i+1 < len(args) {
					i++
					v = args[i]
					codeLit = codeLit && c.lits[i]
				}
				code = append(code, v)
			case "require", "import", "input-type":
				if !hasV {
					i++
				}
			}
			continue
		}
		for k := 1; k < len(arg); k++ {
			l := arg[k]
			if l == 'i' && (lang == "perl" || lang == "ruby") {
				break // perl -i: an edit in place, which asks outside the sandbox
			}
			if strings.IndexByte(codeFlags[lang], l) >= 0 || strings.IndexByte(argFlags[lang], l) >= 0 {
				v := arg[k+1:]
				lit := c.lits[i]
				if v == "" && i+1 < len(args) {
					i++
					v, lit = args[i], c.lits[i]
				}
				switch {
				case strings.IndexByte(codeFlags[lang], l) >= 0:
					code = append(code, v)
					codeLit = codeLit && lit
				case lang == "python" && l == 'm':
					module = v
					operands = args[i+1:]
					i = len(args)
				case lang == "perl" && (l == 'M' || l == 'm'):
					code = append(code, "use "+v+";")
				}
				break
			}
		}
	}
	switch {
	case len(code) > 0:
		if !codeLit {
			a.danger(c, RuleInlineCode, "runs inline "+lang+" code that is built by the shell ("+c.name+")")
		}
		a.inlineCode(c, lang, strings.Join(code, "\n"))
	case module != "":
	case len(operands) == 0 || operands[0] == "-" || isStdinPath(operands[0]):
		c.info.readsStdin = true
		if c.hasStdin {
			a.inlineCode(c, lang, c.stdin)
		}
	default:
		a.runsFile(c, operands[0])
		return
	}
	if c.subsDownload {
		a.runsFile(c, "")
	}
}

// shellStrings finds string literals handed to a shell by inline code:
// system("..."), os.system('...'), `...`, exec("...").
var shellStrings = regexp.MustCompile("(?:system|popen|exec|shell_exec|passthru|execSync|spawnSync|check_output|check_call|call|run|Popen)\\s*\\(?\\s*(?:\"((?:[^\"\\\\]|\\\\.)*)\"|'((?:[^'\\\\]|\\\\.)*)')|`([^`]*)`")

// inlineCode checks a program given to an interpreter on its command line
// or stdin.
func (a *assessor) inlineCode(c *cmd, lang, code string) {
	// Whatever else the code does asks outside the sandbox (an interpreter
	// is not known to only read) and is held by the kernel inside it; what
	// it hands to a shell is checked as a script.
	a.embeddedShell(c, code)
	for _, tok := range strings.FieldsFunc(code, func(r rune) bool { return strings.ContainsRune(" \t\n'\"`(),;[]{}<>=+", r) }) {
		if isSecretFile(tok) {
			a.report(turnapi.RiskDangerous, RuleSecretRead, "reads a secret file ("+c.name+" code names "+short(tok)+")", c.name+" "+rawPattern(code))
			break
		}
	}
}

// embeddedShell checks the shell commands inline code spells out.
func (a *assessor) embeddedShell(c *cmd, code string) {
	for i, m := range shellStrings.FindAllStringSubmatch(code, maxInputs) {
		if i >= maxInputs {
			break
		}
		s := m[1] + m[2] + m[3]
		if s != "" {
			a.script(unescapeC(s), c.sc, c.depth+1)
		}
	}
}

// unescapeC removes the backslash escapes of a C-like string literal.
func unescapeC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

var awkOpts = opts{short: "FvfeilWE", long: longs("field-separator=", "assign=", "file=", "source=", "include=", "load=", "exec=")}

var (
	awkString  = `"((?:[^"\\]|\\.)*)"`
	awkSystem  = regexp.MustCompile(`\bsystem\s*\(\s*` + awkString + `\s*\)`)
	awkGetline = regexp.MustCompile(awkString + `\s*\|\s*getline`)
	awkPipeTo  = regexp.MustCompile(`\|&?\s*` + awkString)
	awkWrite   = regexp.MustCompile(`>>?\s*` + awkString)
	awkRuns    = regexp.MustCompile(`\bsystem\s*\(|\|\s*getline|\|&|\bprintf?\b[^;}]*\|`)
)

// awk: system(), "cmd" | getline and print | "cmd" run shell commands;
// print > "file" writes a file.
func (a *assessor) awk(c *cmd) {
	p := awkOpts.parse(c.args)
	progs := append(slices.Clone(p.values["-e"]), p.values["--source"]...)
	if !p.has("-f", "--file", "-e", "--source") && len(p.operands) > 0 {
		if !c.lits[p.index[0]] {
			a.danger(c, RuleInlineCode, "runs an awk program that is built by the shell")
		}
		progs = append(progs, p.operands[0])
	}
	for _, f := range append(slices.Clone(p.values["-f"]), p.values["--file"]...) {
		if f == "-" || isStdinPath(f) {
			c.info.lang = "awk"
			a.stdinProgram(c, func(text string) { a.awkProgram(c, text) })
		}
	}
	for _, prog := range progs {
		a.awkProgram(c, prog)
	}
}

// stdinProgram checks a program read from stdin: known text is checked,
// unknown text is Dangerous (it runs code nobody read).
func (a *assessor) stdinProgram(c *cmd, check func(string)) {
	if c.hasStdin {
		check(c.stdin)
		return
	}
	c.info.readsStdin = true
}

// makeCmd: make -f - (or /dev/stdin) and --eval run makefile text whose
// recipes are shell commands.
func (a *assessor) makeCmd(c *cmd) {
	p := makeOpts.parse(c.args)
	recipes := func(text string) { a.makeText(c, text) }
	for _, v := range p.values["--eval"] {
		recipes(v)
	}
	for _, f := range append(slices.Clone(p.values["-f"]), append(p.values["--file"], p.values["--makefile"]...)...) {
		if f == "-" || isStdinPath(f) {
			c.info.lang = "make"
			a.stdinProgram(c, recipes)
		}
	}
}

// makeText checks makefile text: Dangerous, and its recipe lines are
// checked as shell commands.
func (a *assessor) makeText(c *cmd, text string) {
	a.danger(c, RuleInlineCode, c.name+" runs makefile text given on its command line or stdin")
	for _, line := range strings.Split(text, "\n") {
		if cmd, ok := strings.CutPrefix(line, "\t"); ok {
			a.shellText(c.call, strings.TrimLeft(cmd, "@-+"))
		}
	}
}

var makeOpts = opts{short: "CfIjlLoOWE", permute: true, long: longs("directory=", "file=", "makefile=", "include-dir=",
	"jobs=", "load-average=", "old-file=", "assume-old=", "output-sync=", "what-if=", "new-file=", "assume-new=",
	"eval=", "debug=", "jobserver-style=", "shuffle=")}

func (a *assessor) awkProgram(c *cmd, prog string) {
	known := 0
	for _, re := range []*regexp.Regexp{awkSystem, awkGetline, awkPipeTo} {
		for _, m := range re.FindAllStringSubmatch(prog, maxInputs) {
			known++
			a.awkCommand(c, unescapeC(m[1]))
		}
	}
	if runs := len(awkRuns.FindAllStringIndex(prog, -1)); runs > known {
		a.danger(c, RuleInlineCode, "awk runs a command it builds ("+c.name+")")
	}
	for _, m := range awkWrite.FindAllStringSubmatch(prog, maxInputs) {
		a.writeTarget(c.sc.resolve(unescapeC(m[1])), c.name+" >", c.pattern(), false)
	}
}

// awkCommand checks a command awk hands to sh; one that is a shell or
// interpreter reads awk's output as its program.
func (a *assessor) awkCommand(c *cmd, s string) {
	a.script(s, c.sc, c.depth+1)
	if f := strings.Fields(s); len(f) > 0 {
		if n := baseName(f[0]); isShell(n) || language(n) != n {
			a.danger(c, RuleInlineCode, "awk pipes text into a shell or interpreter ("+short(s)+")")
		}
	}
}

// isStdinPath reports the names of standard input: /dev/stdin, /dev/fd/0
// and /proc/PID/fd/0 (self, thread-self, $$ ...).
func isStdinPath(p string) bool {
	p = path.Clean(p)
	if p == "/dev/stdin" || p == "/dev/fd/0" {
		return true
	}
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	pid, fd, ok := strings.Cut(rest, "/")
	return ok && pid != "" && (fd == "fd/0" || strings.HasSuffix(fd, "/fd/0") && strings.HasPrefix(fd, "task/"))
}

// isDescriptorPath reports a name of an open file descriptor other than
// standard input (/dev/fd/3, /proc/self/fd/9): what it reads is not known.
func isDescriptorPath(p string) bool {
	p = path.Clean(p)
	return strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/") && strings.Contains(p, "/fd/")
}
