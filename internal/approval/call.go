package approval

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// cmdInfo is what a pipeline needs to know about one of its commands.
type cmdInfo struct {
	name       string
	downloader bool   // prints a download on its output (curl, wget ...)
	readsStdin bool   // runs the program on its stdin
	lang       string // the language it runs: "sh" for shells, else the interpreter
	decoder    bool   // turns its input into other text (base64 -d, rev ...)
	// subsDownload reports a downloader inside the command's substitutions.
	subsDownload bool
	// dynamic reports a command word that is not a literal.
	dynamic bool
	// xargs is the command xargs runs with words read from its stdin.
	xargs []field
}

// call is the context of one simple command while its wrappers are
// removed.
type call struct {
	sc           *scope
	depth        int
	node         syntax.Node // the command as written, for dynamic findings
	stdin        string      // heredocs and here-strings fed to it
	hasStdin     bool
	subsDownload bool
	// via names the wrappers that change who or where the command runs
	// ("sudo -u bob "), for patterns.
	via string
}

// cmd is a simple command without wrappers, ready for the rules.
type cmd struct {
	call
	name string
	args []string
	lits []bool // lits[i] reports that args[i] is a literal
	info cmdInfo
	pat  string // see pattern
}

// callStmt checks a simple command: its substitutions and redirections,
// its assignments, then what it runs.
func (a *assessor) callStmt(s *syntax.Stmt, ce *syntax.CallExpr, sc *scope, depth int) cmdInfo {
	subsDl := false
	for _, as := range ce.Assigns {
		subsDl = a.subs(as, sc, depth) || subsDl
		if as.Name != nil && as.Value != nil {
			v, ok := decoder{a: a, sc: sc, depth: depth}.literal(as.Value)
			a.runsVar(as.Name.Value, v, ok, sc, depth)
		}
	}
	for _, w := range ce.Args {
		subsDl = a.subs(w, sc, depth) || subsDl
	}
	subsDl = a.redirects(s, sc, depth) || subsDl
	if len(ce.Args) == 0 {
		a.assign(ce.Assigns, sc, depth)
		return cmdInfo{subsDownload: subsDl}
	}
	d := decoder{a: a, sc: sc, mode: keepNames, depth: depth}
	// Where git works is part of the patterns: GIT_DIR=~/x git clean -f
	// is not git clean -f.
	saved := a.ctx
	defer func() { a.ctx = saved }()
	for _, as := range ce.Assigns {
		if as.Name != nil && as.Value != nil && (as.Name.Value == "GIT_DIR" || as.Name.Value == "GIT_WORK_TREE") {
			v, _ := d.literal(as.Value)
			a.ctx += as.Name.Value + "=" + v + " "
		}
	}
	stdin, has := d.stdin(s.Redirs)
	base := call{sc: sc, depth: depth, node: ce, stdin: stdin, hasStdin: has, subsDownload: subsDl}
	info := a.run(base, d.words(ce.Args))
	if info.readsStdin && !has {
		a.stdinFile(s, info, sc, depth)
	}
	if info.dynamic {
		// Try the other plausible decoding: unknown variables unset, so
		// that ${RM:-rm} is rm.
		d.mode = unsetNames
		a.run(base, d.words(ce.Args))
	}
	info.subsDownload = info.subsDownload || subsDl
	return info
}

// stdinFile checks a program a shell or interpreter reads from a file
// redirected to its stdin: the output of a process substitution or a
// file the command wrote is checked, or is Dangerous when unknown.
func (a *assessor) stdinFile(s *syntax.Stmt, info cmdInfo, sc *scope, depth int) {
	d := decoder{a: a, sc: sc, depth: depth}
	for _, r := range s.Redirs {
		if r.Word != nil && stdinFromDescriptor(r, d) {
			a.report(turnapi.RiskDangerous, RuleDecodeExec, "runs a program read from another file descriptor ("+info.name+" "+short(printNode(r))+")", rawPattern(printNode(s)))
			continue
		}
		if (r.Op != syntax.RdrIn && r.Op != syntax.RdrInOut) || r.Word == nil {
			continue
		}
		t, ok := d.literal(r.Word)
		if !ok {
			continue
		}
		out, found := sc.procs[t]
		if !found {
			out, found = sc.written[path.Clean(sc.resolve(t))]
		}
		switch {
		case !found && isNetworkPath(t):
			a.report(turnapi.RiskDangerous, RuleCurlPipeShell, "runs a program read from the network ("+info.name+" < "+short(t)+")", rawPattern(printNode(s)))
		case !found:
		case !out.ok:
			a.report(turnapi.RiskDangerous, RuleDecodeExec, "runs the output of a command as a program ("+info.name+" < ...)", rawPattern(printNode(s)))
		default:
			a.knownInput(info, out.text, sc, depth)
		}
	}
}

// maxWrappers bounds how many wrappers one command may stack.
const maxWrappers = 64

// run removes wrappers from a command and checks what is left. A command
// word that is not a literal is reported, and its decoded value is
// checked all the same.
func (a *assessor) run(base call, f []field) cmdInfo {
	// One command, its wrappers included: what its findings are about.
	saved := a.seq
	a.nseq++
	a.seq = a.nseq
	defer func() { a.seq = saved }()
	dynamic := false
	for n := 0; len(f) > 0; n++ {
		if n == maxWrappers {
			a.tooDeep = true
			break
		}
		c0 := f[0]
		if !c0.lit || c0.glob {
			dynamic = true
			a.reportDynamic(base.node)
		}
		name := baseName(c0.s)
		if c0.lit && c0.s == "--" && len(f) > 1 {
			f = f[1:] // time -- CMD
			continue
		}
		if name == "" || strings.HasPrefix(name, "-") {
			break
		}
		if c0.glob {
			for _, k := range knownNames() {
				if ok, _ := path.Match(name, k); ok && k != name {
					a.dispatch(base, k, f[1:])
				}
			}
		}
		if p := path.Clean(c0.s); base.sc.downloaded[p] || base.sc.downloaded[path.Base(p)] && strings.Contains(c0.s, "/") {
			a.report(turnapi.RiskDangerous, RuleCurlPipeShell, "runs a file it downloaded ("+short(c0.s)+")", "run "+p)
		}
		if out, ok := base.sc.written[path.Clean(base.sc.resolve(c0.s))]; ok && strings.Contains(c0.s, "/") {
			if out.ok {
				a.script(out.text, base.sc, base.depth+1)
			} else {
				a.report(turnapi.RiskDangerous, RuleDynamicCommand, "runs a file the command wrote ("+short(c0.s)+")", "run "+path.Clean(c0.s))
			}
		}
		if w := wrappers[name]; w != nil {
			a.wrapperCheck(name, f[1:])
			base = a.wrapperContext(base, name, strs(f[1:]))
			saved := a.ctx
			a.ctx += base.via
			next, ok := w(a, base, f[1:])
			a.ctx = saved
			a.builtOptions(name, f[1:len(f)-len(next)])
			if !ok {
				return cmdInfo{name: name, dynamic: dynamic}
			}
			if name == "xargs" {
				info := a.run(base, next)
				info.xargs = next
				if base.hasStdin {
					a.xargsInput(base.node, next, base.stdin, base.sc, base.depth)
				}
				return info
			}
			f = next
			continue
		}
		if body := base.sc.funcs[name]; body != nil && c0.lit && len(f) > 1 && base.depth < maxDepth {
			// A function the text defined, called with arguments: its
			// body runs with them as $1 ...
			if a.calls++; a.calls > maxCalls {
				a.tooDeep = true
			} else {
				a.stmt(body, base.sc.withArgs(strs(f)), base.depth+1)
			}
		}
		info := a.dispatch(base, name, f[1:])
		info.dynamic = dynamic
		return info
	}
	return cmdInfo{dynamic: dynamic}
}

// dispatch applies the rules for one program.
func (a *assessor) dispatch(base call, name string, f []field) cmdInfo {
	c := &cmd{call: base, name: name, args: make([]string, len(f)), lits: make([]bool, len(f))}
	for i := range f {
		c.args[i], c.lits[i] = f[i].s, f[i].lit
	}
	c.info.name = name
	saved := a.ctx
	a.ctx += base.via
	if w := base.sc.where(); !strings.Contains(a.ctx, w) {
		a.ctx += w
	}
	if h := handlerFor(name); h != nil {
		h(a, c)
	}
	a.readOnlyCheck(c)
	a.metadata(c)
	a.outputFiles(c)
	a.secretArgs(c)
	a.ctx = saved
	return c.info
}

// wrapperContext notes what a wrapper changes about where its command
// runs: the directory (env -C, sudo -D ...) in a scope of its own, the
// user or host in via.
func (a *assessor) wrapperContext(base call, name string, args []string) call {
	dir, via := "", ""
	switch name {
	case "env":
		dir, _ = envOpts.parse(args).value("-C", "--chdir")
	case "sudo", "doas":
		p := sudoOpts.parse(args)
		if name == "doas" {
			p = doasOpts.parse(args)
		}
		dir, _ = p.value("-D", "--chdir")
		via = name + " "
		if u, ok := p.value("-u", "--user"); ok {
			via = name + " -u " + u + " "
		}
	case "su", "runuser":
		p := suOpts.parse(args)
		via = name + " "
		if u, ok := p.value("-u"); ok {
			via = name + " -u " + u + " "
		} else if len(p.operands) > 0 && !strings.HasPrefix(p.operands[0], "-") {
			via = name + " " + p.operands[0] + " "
		}
	case "ssh":
		p := sshOpts.parse(args)
		if len(p.operands) > 0 {
			via = "ssh " + p.operands[0] + ": "
		}
	case "strace", "ltrace", "time":
		for _, o := range optValues(args, "-o", "--output") {
			a.writeTarget(base.sc.resolve(o), name+" -o", name+" -o "+cleanArg(o), false)
		}
	case "script":
		p := scriptOpts.parse(args)
		for _, o := range append(p.operands, optValues(args, "-O", "--log-out", "-I", "--log-in", "-B", "--log-io", "-T", "--log-timing")...) {
			a.writeTarget(base.sc.resolve(o), "script", "script "+cleanArg(o), false)
		}
	case "nsenter", "unshare":
		dir, _ = opts{long: longs("wd=")}.parse(args).value("--wd")
	case "systemd-run":
		dir, _ = opts{long: longs("working-directory=")}.parse(args).value("--working-directory")
	}
	base.via += via
	if dir != "" {
		child := *base.sc
		child.cwd = base.sc.chdir(dir)
		base.sc = &child
	}
	return base
}

// handlerFor finds the rules for a program by name, then by family
// (python3.12, mkfs.ext4, pip3).
func handlerFor(name string) func(*assessor, *cmd) {
	if h := handlers[name]; h != nil {
		return h
	}
	switch {
	case isPython(name), strings.HasPrefix(name, "perl"), strings.HasPrefix(name, "ruby"),
		strings.HasPrefix(name, "php"), strings.HasPrefix(name, "node"):
		return (*assessor).interpreter
	case strings.HasPrefix(name, "mkfs."):
		return (*assessor).mkfs
	}
	return nil
}

// handlers holds the rules by program name; wrappers are removed before.
var handlers map[string]func(*assessor, *cmd)

func init() {
	handlers = map[string]func(*assessor, *cmd){}
	add := func(h func(*assessor, *cmd), names ...string) {
		for _, n := range names {
			handlers[n] = h
		}
	}
	add((*assessor).shellCmd, shellNames...)
	add((*assessor).interpreter, "python", "pypy", "pypy3", "perl", "ruby", "node", "nodejs", "php", "deno", "bun", "lua", "tclsh", "osascript",
		"luajit", "Rscript", "R", "julia", "pwsh", "powershell")
	add((*assessor).awk, "awk", "gawk", "mawk", "nawk")
	add((*assessor).source, "source", ".")
	add((*assessor).rm, "rm")
	add((*assessor).gdb, "gdb", "cgdb")
	add((*assessor).makeCmd, "make", "gmake")
	add((*assessor).writesOperands, "sponge", "ed", "red")
	add((*assessor).netShell, "nc", "ncat", "netcat", "socat")
	add((*assessor).editor, "vim", "vi", "nvim", "ex", "view", "gvim", "vimdiff", "rvim", "emacs", "emacsclient")
	add((*assessor).man, "man")
	add((*assessor).pager, "less", "more", "most")
	add((*assessor).tmux, "tmux")
	add((*assessor).scp, "scp", "sftp")
	add((*assessor).zip, "zip")
	add((*assessor).at, "at", "batch")
	add((*assessor).expect, "expect")
	add((*assessor).nameArgs, "printf", "read", "test", "[", "unset", "declare", "typeset", "local", "export",
		"readonly", "let", "mapfile", "readarray")
	add((*assessor).cd, "cd", "pushd", "popd")
	add((*assessor).find, "find")
	add((*assessor).git, "git")
	add((*assessor).dd, "dd")
	add((*assessor).mkfs, "mkfs", "mke2fs", "mkfs.ext4")
	add((*assessor).shred, "shred")
	add((*assessor).copies, "cp", "mv", "install", "ln", "tee")
	add((*assessor).rsync, "rsync")
	add((*assessor).tar, "tar", "bsdtar", "gtar")
	add((*assessor).sed, "sed", "gsed")
	add((*assessor).perms, "chmod", "chown", "chgrp")
	add((*assessor).touches, "truncate", "touch", "mkdir", "rmdir", "unlink", "chattr", "setfacl")
	add((*assessor).crontabInstall, "crontab")
	add((*assessor).sqlClient, "psql", "mysql", "mariadb", "sqlite3", "sqlite", "sqlcmd", "clickhouse-client", "clickhouse", "cockroach", "duckdb", "dropdb", "mysqladmin")
	add((*assessor).downloader, "curl", "wget", "fetch", "http", "https", "xh", "lwp-request", "aria2c")
	add((*assessor).decoderCmd, "base64", "base32", "basenc", "xxd", "rev", "openssl", "gunzip", "zcat", "gzip",
		"bzip2", "bunzip2", "bzcat", "xz", "unxz", "xzcat", "zstd", "unzstd", "zstdcat", "lzma", "unlzma", "uudecode", "tr")
}

// shellNames are the shells run by name.
var shellNames = []string{"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh", "rbash"}

func isShell(name string) bool {
	return slices.Contains(shellNames, name)
}

// isSelfExe reports /proc/self/exe and /proc/PID/exe: run from a shell,
// they are that shell.
func isSelfExe(w string) bool {
	p := path.Clean(w)
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	pid, file, ok := strings.Cut(rest, "/")
	return ok && pid != "" && (file == "exe" || strings.HasPrefix(file, "task/") && strings.HasSuffix(file, "/exe"))
}

// baseName is the last element of a command path: "/usr/bin/rm" → "rm".
func baseName(w string) string {
	if isSelfExe(w) {
		return "bash"
	}
	return w[strings.LastIndexByte(w, '/')+1:]
}

// isPython matches python, python3, python3.12 ...
func isPython(name string) bool {
	return strings.HasPrefix(name, "python") || name == "pypy" || name == "pypy3"
}

// stdinFromDescriptor reports a redirection that makes stdin a copy of
// another descriptor (<&3, 0>&1, 0<>/dev/tcp/...): what it reads is not
// known.
func stdinFromDescriptor(r *syntax.Redirect, d decoder) bool {
	if r.Op != syntax.DplIn && r.Op != syntax.DplOut {
		return false
	}
	if r.N != nil && r.N.Value != "0" {
		return false
	}
	if r.N == nil && r.Op == syntax.DplOut {
		return false
	}
	t, ok := d.literal(r.Word)
	return !ok || (t != "-" && t != "0")
}

// isNetworkPath reports bash's network names, /dev/tcp/HOST/PORT and
// /dev/udp/HOST/PORT.
func isNetworkPath(p string) bool {
	p = path.Clean(p)
	return strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/")
}
