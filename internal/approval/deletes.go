package approval

import (
	"slices"
	"strings"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// rm: recursive deletes need approval; of /, of a home or of a system
// directory they are refused.
func (a *assessor) rm(c *cmd) {
	recursive, force, noPreserve := false, false, false
	var targets []string
	optsDone := false
	for _, arg := range c.args {
		if !optsDone && arg == "--" {
			optsDone = true
			continue
		}
		if !optsDone && len(arg) > 1 && arg[0] == '-' {
			if name, ok := strings.CutPrefix(arg, "--"); ok {
				name, _, _ = strings.Cut(name, "=")
				recursive = recursive || name != "" && strings.HasPrefix("recursive", name)
				force = force || name != "" && strings.HasPrefix("force", name)
				noPreserve = noPreserve || name != "" && strings.HasPrefix("no-preserve-root", name)
			} else {
				recursive = recursive || strings.ContainsAny(arg[1:], "rR")
				force = force || strings.ContainsAny(arg[1:], "f")
			}
			continue
		}
		targets = append(targets, c.sc.resolve(arg))
	}
	flags := "rm"
	if recursive {
		flags += " -r"
		if force {
			flags += "f"
		}
	}
	pat := strings.TrimSpace(flags + " " + strings.Join(cleanAll(targets), " "))
	if recursive {
		for _, t := range targets {
			switch {
			case isRootTarget(t):
				a.report(turnapi.RiskBlocked, RuleRootDelete, "recursive delete of the root filesystem (rm -r "+short(t)+")", pat)
			case isHomeRoot(t):
				a.report(turnapi.RiskBlocked, RuleHomeDelete, "recursive delete of a whole home directory (rm -r "+short(t)+")", pat)
			case isSystemDir(t):
				a.report(turnapi.RiskBlocked, RuleSystemDirDelete, "recursive delete of a system directory (rm -r "+short(t)+")", pat)
			}
		}
		if noPreserve {
			a.report(turnapi.RiskBlocked, RuleRootDelete, "recursive delete without root protection (rm --no-preserve-root)", pat)
		}
		a.report(turnapi.RiskDangerous, RuleRecursiveDelete, "recursive delete (rm -r)", pat)
	}
}

// cd remembers the directory later relative paths are in.
func (a *assessor) cd(c *cmd) {
	p := (opts{}).parse(c.args)
	switch {
	case c.name == "popd":
		c.sc.cwd = "$DIRSTACK"
	case len(p.operands) == 0 && c.name == "cd":
		c.sc.cwd = "~"
		if h, ok := c.sc.vars["HOME"]; ok {
			c.sc.cwd = c.sc.chdir(h)
		}
	case len(p.operands) == 0:
		c.sc.cwd = "$DIRSTACK"
	default:
		c.sc.cwd = c.sc.chdir(p.operands[0])
	}
	if dirWeight(c.sc.cwd) > dirWeight(c.sc.peak) {
		c.sc.peak = c.sc.cwd
	}
}

// findKeep are the find primaries that do not narrow what it matches.
var findKeep = map[string]bool{
	"-delete": true, "-depth": true, "-d": true, "-xdev": true, "-mount": true, "-noleaf": true,
	"-ignore_readdir_race": true, "-follow": true, "-daystart": true, "-print": true, "-print0": true,
	"-maxdepth": true, "-mindepth": true,
}

// find: -delete and -exec rm delete what matches, everything under its
// start paths when nothing narrows the match.
func (a *assessor) find(c *cmd) {
	a.findOutputs(c)
	starts, expr, narrowed := findScope(c.args, c.sc)
	for k := 0; k < len(expr); k++ {
		e := expr[k]
		if findTakes[e] {
			k++
			continue
		}
		if isExec(e) {
			j := k + 1
			for j < len(expr) && expr[j] != ";" && expr[j] != "+" {
				j++
			}
			_, _, before := findScope(append([]string{"."}, expr[:k]...), c.sc)
			a.findExec(c, e, expr[k+1:j], starts, before || e == "-ok" || e == "-okdir", expr[:k])
			k = j
		}
	}
	if !slices.Contains(expr, "-delete") {
		return
	}
	pat := "find " + strings.Join(cleanAll(starts), " ") + " " + strings.Join(expr, " ")
	if !narrowed {
		for _, s := range starts {
			a.wholeTreeDelete(s, "find "+short(s)+" -delete", pat)
		}
	}
	a.report(turnapi.RiskDangerous, RuleRecursiveDelete, "recursive delete (find -delete)", pat)
}

// findTakes are the find primaries that take an argument.
var findTakes = map[string]bool{"-maxdepth": true, "-mindepth": true, "-type": true, "-xtype": true,
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-newer": true, "-user": true, "-group": true, "-perm": true,
	"-size": true, "-mtime": true, "-mmin": true, "-atime": true, "-amin": true, "-ctime": true, "-cmin": true,
	"-fprint": true, "-fprint0": true, "-fls": true, "-regextype": true, "-samefile": true, "-inum": true,
	"-links": true, "-uid": true, "-gid": true, "-lname": true, "-ilname": true, "-used": true, "-fstype": true}

// findAll are the values of -name, -path ... that match every file.
var findAll = map[string]bool{"*": true, "**": true, ".*": true, "/*": true, "*/*": true}

// findScope splits find's arguments into its start paths, resolved
// against the directory cd changed to, and its expression; narrowed
// reports a test that limits what matches. An -o makes the match
// unnarrowed: what the other side misses, this side takes.
func findScope(args []string, sc *scope) (starts, expr []string, narrowed bool) {
	i := 0
	for i < len(args) && (args[i] == "-H" || args[i] == "-L" || args[i] == "-P" || strings.HasPrefix(args[i], "-O") || args[i] == "-D") {
		if args[i] == "-D" {
			i++
		}
		i++
	}
	for ; i < len(args) && !strings.HasPrefix(args[i], "-") && args[i] != "(" && args[i] != "!"; i++ {
		starts = append(starts, sc.resolve(args[i]))
	}
	if len(starts) == 0 {
		starts = []string{sc.resolve(".")}
	}
	expr = args[min(i, len(args)):]
	or := false
	for k := 0; k < len(expr); k++ {
		e := expr[k]
		switch {
		case e == "-o" || e == "-or" || e == ",":
			or = true
		case isExec(e):
			for k+1 < len(expr) && expr[k+1] != ";" && expr[k+1] != "+" {
				k++
			}
			k++
		case findTakes[e]:
			k++
			v := ""
			if k < len(expr) {
				v = expr[k]
			}
			wide := findAll[v] || (e == "-regex" || e == "-iregex") && (v == ".*" || v == ".+")
			if e != "-maxdepth" && e != "-mindepth" && e != "-type" && e != "-xtype" && !wide &&
				!strings.HasPrefix(e, "-fprint") && e != "-fls" && e != "-regextype" {
				narrowed = true
			}
		case strings.HasPrefix(e, "-") && !findKeep[e] && e != "-true" && e != "-a" && e != "-and":
			narrowed = true
		}
	}
	return starts, expr, narrowed && !or
}

func isExec(e string) bool {
	return e == "-exec" || e == "-execdir" || e == "-ok" || e == "-okdir"
}

// findExec checks the command find runs for each match: a match is the
// start path itself when nothing narrows them, otherwise something below.
func (a *assessor) findExec(c *cmd, how string, words []string, starts []string, narrowed bool, filters []string) {
	if len(words) == 0 {
		return
	}
	if c.depth >= maxDepth {
		a.tooDeep = true
		return
	}
	for _, s := range starts {
		match := s
		if narrowed {
			match = strings.TrimSuffix(s, "/") + "/_match_"
		}
		f := make([]field, len(words))
		for i, w := range words {
			f[i] = field{s: strings.ReplaceAll(w, "{}", match), lit: true}
		}
		base := c.call
		base.depth++
		info := a.run(base, f)
		if info.name == "rm" || info.name == "shred" || info.name == "unlink" || info.name == "rmdir" {
			pat := strings.Join(append(append([]string{"find", cleanArg(s)}, filters...), how), " ") + " " + strings.Join(words, " ")
			if !narrowed && info.name != "rmdir" {
				a.wholeTreeDelete(s, "find "+short(s)+" "+how+" "+info.name, pat)
			}
			a.report(turnapi.RiskDangerous, RuleRecursiveDelete, "recursive delete (find "+how+" "+info.name+")", pat)
		}
	}
}

// wholeTreeDelete reports a delete of everything under / or a home or a
// system directory.
func (a *assessor) wholeTreeDelete(t, what, pat string) {
	switch {
	case isRootTarget(t):
		a.report(turnapi.RiskBlocked, RuleRootDelete, "recursive delete of the root filesystem ("+what+")", pat)
	case isHomeRoot(t):
		a.report(turnapi.RiskBlocked, RuleHomeDelete, "recursive delete of a whole home directory ("+what+")", pat)
	case isSystemDir(t):
		a.report(turnapi.RiskBlocked, RuleSystemDirDelete, "recursive delete of a system directory ("+what+")", pat)
	}
}

// shred overwrites files, and disks.
func (a *assessor) shred(c *cmd) {
	p := opts{short: "ns", permute: true, long: longs("iterations=", "size=", "random-source=", "remove")}.parse(c.args)
	for _, t := range p.operands {
		if isDisk(c.sc.resolve(t)) {
			a.report(turnapi.RiskBlocked, RuleRawDiskWrite, "overwrites a disk device (shred "+short(t)+")", c.pattern())
		}
	}
}

var gitConfigOpts = opts{short: "f", permute: true, long: longs("file=", "blob=", "type=", "default=", "comment=",
	"value=", "url=", "global", "system", "local", "worktree", "add", "replace-all", "append", "all", "bool", "int",
	"path", "null", "name-only", "show-origin", "show-scope", "includes", "no-includes", "fixed-value")}

var gitOpts = opts{short: "Cc", long: longs("git-dir=", "work-tree=", "namespace=", "exec-path=", "config-env=")}

func (a *assessor) git(c *cmd) {
	p := gitOpts.parse(c.args)
	if len(p.operands) == 0 {
		return
	}
	for _, kv := range p.values["-c"] {
		a.gitConfig(c, kv)
	}
	// Where git works is part of every pattern: git -C ~ clean -fdx is
	// not git clean -fdx.
	saved := a.ctx
	defer func() { a.ctx = saved }()
	for _, f := range []string{"-C", "--git-dir", "--work-tree"} {
		for _, v := range p.values[f] {
			if f == "-C" {
				v = c.sc.chdir(v)
			}
			a.ctx += "git " + f + " " + v + " "
		}
	}
	sub, rest := p.operands[0], c.args[p.index[0]+1:]
	for _, r := range rest {
		if v, ok := strings.CutPrefix(r, "ext::"); ok {
			a.runsOption(c, "git "+sub+" ext::", "", false)
			a.gitExt(c, v)
		}
	}
	if sub == "clone" {
		a.gitCloneDir(c, rest)
	}
	if sub == "config" {
		kv := gitConfigOpts.parse(rest).operands
		if len(kv) > 0 && (kv[0] == "set" || kv[0] == "--add") {
			kv = kv[1:]
		}
		if len(kv) >= 2 {
			a.gitConfig(c, kv[0]+"="+kv[1])
		}
	}
	pat := "git " + sub + " " + strings.Join(rest, " ")
	switch sub {
	case "clean":
		force := clusterHas(rest, 'f') || slices.Contains(rest, "--force")
		dry := clusterHas(rest, 'n') || slices.Contains(rest, "--dry-run")
		if force && !dry {
			a.report(turnapi.RiskDangerous, RuleGitClean, "deletes untracked files (git clean -f)", canon("git clean", rest))
		}
	case "reset":
		if slices.Contains(rest, "--hard") {
			a.report(turnapi.RiskDangerous, RuleGitResetHard, "discards uncommitted changes (git reset --hard)", strings.TrimSpace(pat))
		}
	case "checkout", "switch":
		if clusterHas(rest, 'f') || slices.Contains(rest, "--force") || sub == "switch" && slices.Contains(rest, "--discard-changes") {
			a.report(turnapi.RiskDangerous, RuleGitResetHard, "discards uncommitted changes (git "+sub+" --force)", strings.TrimSpace(pat))
		}
	case "stash":
		if len(rest) > 0 && (rest[0] == "drop" || rest[0] == "clear") {
			a.report(turnapi.RiskDangerous, RuleGitDiscard, "discards stashed changes (git stash "+rest[0]+")", strings.TrimSpace(pat))
		}
	case "worktree":
		if len(rest) > 0 && rest[0] == "remove" && (clusterHas(rest[1:], 'f') || slices.Contains(rest, "--force")) {
			a.report(turnapi.RiskDangerous, RuleGitDiscard, "removes a worktree with its changes (git worktree remove --force)", strings.TrimSpace(pat))
		}
	case "push":
		force := clusterHas(rest, 'f')
		for _, r := range rest {
			if r == "--force" || strings.HasPrefix(r, "--force-with-lease") || (strings.HasPrefix(r, "+") && len(r) > 1) {
				force = true
			}
		}
		if force {
			a.report(turnapi.RiskDangerous, RuleGitForcePush, "rewrites remote history (git push --force)", strings.TrimSpace(pat))
		}
		for _, r := range rest {
			if r == "--mirror" || r == "--delete" || r == "--prune" || r == "-d" || len(r) > 1 && r[0] == ':' {
				a.report(turnapi.RiskDangerous, RuleGitForcePush, "deletes or overwrites remote refs (git push "+short(r)+")", strings.TrimSpace(pat))
			}
		}
	case "branch":
		if clusterHas(rest, 'D') || (slices.Contains(rest, "--delete") || clusterHas(rest, 'd')) && (slices.Contains(rest, "--force") || clusterHas(rest, 'f')) {
			a.report(turnapi.RiskDangerous, RuleGitDiscard, "deletes a branch whatever it holds (git branch -D)", strings.TrimSpace(pat))
		}
	case "reflog":
		if len(rest) > 0 && (rest[0] == "expire" || rest[0] == "delete") {
			a.report(turnapi.RiskDangerous, RuleGitDiscard, "discards the reflog (git reflog "+rest[0]+")", strings.TrimSpace(pat))
		}
	case "gc", "prune":
		for _, r := range rest {
			if sub == "prune" && !strings.HasPrefix(r, "-n") && r != "--dry-run" || strings.HasPrefix(r, "--prune=now") || r == "--prune=all" || strings.HasPrefix(r, "--expire=now") {
				a.report(turnapi.RiskDangerous, RuleGitDiscard, "drops unreachable commits now (git "+sub+" "+short(r)+")", strings.TrimSpace(pat))
				break
			}
		}
	case "rm":
		if clusterHas(rest, 'r') {
			a.report(turnapi.RiskDangerous, RuleRecursiveDelete, "recursive delete (git rm -r)", canon("git rm", rest))
		}
	}
}

// gitRuns are the git settings whose value is a command git runs.
var gitRuns = map[string]bool{"core.pager": true, "core.sshcommand": true, "core.editor": true,
	"core.fsmonitor": true, "core.hookspath": true, "credential.helper": true, "diff.external": true,
	"sequence.editor": true, "gpg.program": true, "pager.log": true, "pager.diff": true, "pager.show": true,
	"core.askpass": true, "uploadpack.packobjectshook": true, "core.gitproxy": true,
	"core.alternaterefscommand": true, "instaweb.httpd": true, "gpg.ssh.defaultkeycommand": true}

// gitRunsSuffixes end the names of settings whose value is a command
// (filter.NAME.clean, difftool.NAME.cmd, merge.NAME.driver ...).
var gitRunsSuffixes = []string{".command", ".textconv", ".clean", ".smudge", ".process", ".cmd", ".driver",
	".program", ".helper", ".receivepack", ".uploadpack", ".gitproxy"}

// gitRunsKey reports a setting whose value git runs as a command.
func gitRunsKey(key string) bool {
	if gitRuns[key] || strings.HasPrefix(key, "pager.") {
		return true
	}
	for _, s := range gitRunsSuffixes {
		if strings.HasSuffix(key, s) {
			return true
		}
	}
	return false
}

// gitConfig checks a "git -c key=value" that makes git run a command.
func (a *assessor) gitConfig(c *cmd, kv string) {
	key, val, _ := strings.Cut(kv, "=")
	key = strings.ToLower(key)
	switch {
	case strings.HasPrefix(key, "alias.") && strings.HasPrefix(val, "!"):
		a.shellText(c.call, val[1:])
	case gitRunsKey(key):
		a.danger(c, RuleInlineCode, "git -c "+short(key)+" makes git run a command")
		a.shellText(c.call, strings.TrimPrefix(val, "!"))
	case key == "include.path" || strings.HasPrefix(key, "includeif.") && strings.HasSuffix(key, ".path"):
		a.danger(c, RuleInlineCode, "git -c "+short(key)+" makes git load settings from a file")
	}
}

// canon is a generic pattern: the program, its short options merged and
// sorted, its long options sorted, then its operands in order with paths
// cleaned.
func canon(name string, args []string) string {
	var letters []byte
	var longOpts, operands []string
	for i, arg := range args {
		switch {
		case arg == "--":
			operands = append(operands, cleanAll(args[i+1:])...)
			return canonJoin(name, letters, longOpts, operands)
		case strings.HasPrefix(arg, "--"):
			longOpts = append(longOpts, arg)
		case len(arg) > 1 && arg[0] == '-' && (arg[1] < '0' || arg[1] > '9'):
			letters = append(letters, arg[1:]...)
		case strings.ContainsAny(arg, "/~") || strings.HasPrefix(arg, "."):
			operands = append(operands, cleanArg(arg))
		default:
			operands = append(operands, arg)
		}
	}
	return canonJoin(name, letters, longOpts, operands)
}

func canonJoin(name string, letters []byte, longOpts, operands []string) string {
	parts := []string{name}
	if len(letters) > 0 {
		slices.Sort(letters)
		parts = append(parts, "-"+string(slices.Compact(letters)))
	}
	slices.Sort(longOpts)
	parts = append(parts, slices.Compact(longOpts)...)
	parts = append(parts, operands...)
	return strings.Join(parts, " ")
}
