package approval

import (
	"slices"
	"strings"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// programRules are the rules of programs that destroy or overwrite.
var programRules = map[string]func(*assessor, *cmd){
	"rm":      (*assessor).rm,
	"rsync":   (*assessor).rsync,
	"mv":      (*assessor).mv,
	"chmod":   (*assessor).perms,
	"chown":   (*assessor).perms,
	"chgrp":   (*assessor).perms,
	"setfacl": (*assessor).perms,
	"tar":     (*assessor).tar,
	"unzip":   (*assessor).unzip,
	"dd":      (*assessor).dd,
	"cp":      (*assessor).diskWrite,
	"install": (*assessor).diskWrite,
	"tee":     (*assessor).diskWrite,
	"shred":   (*assessor).diskWrite,
	"wipefs":  (*assessor).diskWrite,
	"mkswap":  (*assessor).mkfs,
	"mke2fs":  (*assessor).mkfs,
	"git":     (*assessor).git,
	"cd":      func(a *assessor, c *cmd) { a.chdir(c) },
	"pushd":   func(a *assessor, c *cmd) { a.chdir(c) },
	"popd":    func(a *assessor, _ *cmd) { a.dir = unknownDir },
}

// rules checks a command without wrappers.
func (a *assessor) rules(c *cmd) {
	if a.allowlist && !readOnly(c) {
		a.report(turnapi.RiskDangerous, RuleNotReadOnly, "runs "+short(c.name)+", which is not known to only read (outside the sandbox every such command asks)", c.pattern())
	}
	if c.name == "find" {
		a.find(c) // its own map entry would make an initialisation cycle
	} else if f := programRules[c.name]; f != nil {
		f(a, c)
	} else if strings.HasPrefix(c.name, "mkfs") {
		a.mkfs(c)
	}
	a.secretArgs(c)
	a.metadata(c)
	a.sqlClient(c)
}

// rm: a recursive delete; of /, a home or a system directory it is
// Blocked.
func (a *assessor) rm(c *cmd) {
	if !hasOpt(c.args, "-r", "-R", "--recursive") {
		return
	}
	ops := operands(c.args)
	if len(ops) == 0 {
		a.danger(c, RuleRecursiveDelete, "deletes recursively")
	}
	for _, t := range ops {
		a.deleteTarget(c, a.resolve(t), "deletes")
	}
}

// deleteTarget reports the deletion of t, what of it is deleted.
func (a *assessor) deleteTarget(c *cmd, t, verb string) {
	switch {
	case isRootTarget(t):
		a.report(turnapi.RiskBlocked, RuleRootDelete, verb+" the root filesystem ("+short(t)+")", c.pattern())
	case isHomeRoot(t):
		a.report(turnapi.RiskBlocked, RuleHomeDelete, verb+" a home directory ("+short(t)+")", c.pattern())
	case isSystemDir(t):
		a.report(turnapi.RiskBlocked, RuleSystemDirDelete, verb+" a system directory ("+short(t)+")", c.pattern())
	default:
		a.danger(c, RuleRecursiveDelete, verb+" recursively ("+short(t)+")")
	}
}

// danger reports a Dangerous finding about the whole command.
func (a *assessor) danger(c *cmd, rule, reason string) {
	a.report(turnapi.RiskDangerous, rule, reason, c.pattern())
}

// findNarrows are find's tests that pick some files, not all.
var findNarrows = []string{"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
	"-lname", "-ilname", "-samefile", "-inum", "-newer"}

// find: -delete, or -exec (-execdir, -ok, -okdir) of a command, which is
// checked with {} as a file below the starting points.
func (a *assessor) find(c *cmd) {
	var starts []string
	i := 0
	for ; i < len(c.args) && !strings.HasPrefix(c.args[i], "-") && c.args[i] != "(" && c.args[i] != "!"; i++ {
		starts = append(starts, c.args[i])
	}
	if len(starts) == 0 {
		starts = []string{"."}
	}
	expr := c.args[i:]
	narrowed := !slices.ContainsFunc(expr, func(e string) bool { return e == "-o" || e == "-or" || e == "," })
	if narrowed {
		narrowed = false
		for j, e := range expr {
			if slices.Contains(findNarrows, e) && j+1 < len(expr) && !slices.Contains([]string{"*", "**", ".*", "/*", "*/*"}, expr[j+1]) {
				narrowed = true
			}
		}
	}
	below := func(s string) string {
		if narrowed {
			return strings.TrimSuffix(a.resolve(s), "/") + "/match"
		}
		return strings.TrimSuffix(a.resolve(s), "/") + "/*"
	}
	if slices.Contains(expr, "-delete") {
		for _, s := range starts {
			a.deleteTarget(c, below(s), "deletes files below")
		}
	}
	for j := 0; j < len(expr); j++ {
		if e := expr[j]; e != "-exec" && e != "-execdir" && e != "-ok" && e != "-okdir" {
			continue
		}
		var ws []word
		for j++; j < len(expr) && expr[j] != ";" && expr[j] != "+"; j++ {
			ws = append(ws, word{s: expr[j], exact: true})
		}
		for _, s := range starts {
			if len(ws) > 0 && slices.Contains([]string{"rm", "unlink", "shred", "rmdir"}, baseName(ws[0].s)) {
				a.deleteTarget(c, below(s), "deletes files below")
				continue
			}
			run := slices.Clone(ws)
			for k := range run {
				run[k].s = strings.ReplaceAll(run[k].s, "{}", below(s))
			}
			a.run(run, c.via, c.depth+1)
		}
	}
}

// rsync --delete deletes at the destination; onto /, a home or a system
// directory it is Blocked.
func (a *assessor) rsync(c *cmd) {
	if !slices.ContainsFunc(c.args, func(s string) bool { return strings.HasPrefix(s, "--del") || s == "--remove-source-files" }) {
		return
	}
	ops := operands(c.args)
	if len(ops) > 0 && (isRootTarget(a.resolve(ops[len(ops)-1])) || isSystemDir(a.resolve(ops[len(ops)-1])) || isHomeRoot(a.resolve(ops[len(ops)-1]))) {
		a.report(turnapi.RiskBlocked, RuleRootOverwrite, "makes / , a home or a system directory a copy of another ("+short(ops[len(ops)-1])+")", c.pattern())
		return
	}
	a.danger(c, RuleRecursiveDelete, "deletes files at the destination (rsync --delete)")
}

// mv of /, a home or a system directory moves it away.
func (a *assessor) mv(c *cmd) {
	ops := operands(c.args)
	if !hasOpt(c.args, "-t", "--target-directory") && len(ops) > 0 {
		ops = ops[:len(ops)-1]
	}
	for _, s := range ops {
		if t := a.resolve(s); isRootTarget(t) || isHomeRoot(t) || isSystemDir(t) {
			a.deleteTarget(c, t, "moves away")
		}
	}
}

// perms: a recursive chmod, chown or setfacl of /, a home or a system
// directory.
func (a *assessor) perms(c *cmd) {
	if !hasOpt(c.args, "-R", "--recursive") {
		return
	}
	rule := RuleRootChmod
	if c.name == "chown" || c.name == "chgrp" {
		rule = RuleRootChown
	}
	for _, s := range operands(c.args) {
		if t := a.resolve(s); isRootTarget(t) || isHomeRoot(t) || isSystemDir(t) {
			a.report(turnapi.RiskBlocked, rule, "changes the permissions of everything in "+short(s), c.pattern())
			return
		}
	}
}

// tar extracting onto /, a home or a system directory, or writing an
// archive onto a disk.
func (a *assessor) tar(c *cmd) {
	extracts := hasOpt(c.args, "--extract", "--get") || len(c.args) > 0 && !strings.HasPrefix(c.args[0], "-") && strings.Contains(c.args[0], "x") ||
		slices.ContainsFunc(c.args, func(s string) bool { return len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.Contains(s, "x") })
	ws := wordsOf(c.args)
	for i := range ws {
		if v, _ := optValue(ws, i, "-f", "--file"); isDisk(a.resolve(v.s)) {
			a.report(turnapi.RiskBlocked, RuleRawDiskWrite, "writes onto a disk ("+short(v.s)+")", c.pattern())
		}
		if v, _ := optValue(ws, i, "-C", "--directory"); extracts && v.s != "" {
			if t := a.resolve(v.s); isRootTarget(t) || isSystemDir(t) || isHomeRoot(t) {
				a.report(turnapi.RiskBlocked, RuleRootOverwrite, "extracts over "+short(v.s), c.pattern())
			}
		}
	}
}

// unzip -d onto /, a home or a system directory.
func (a *assessor) unzip(c *cmd) {
	ws := wordsOf(c.args)
	for i := range ws {
		if v, _ := optValue(ws, i, "-d"); v.s != "" {
			if t := a.resolve(v.s); isRootTarget(t) || isSystemDir(t) || isHomeRoot(t) {
				a.report(turnapi.RiskBlocked, RuleRootOverwrite, "extracts over "+short(v.s), c.pattern())
			}
		}
	}
}

// dd of=DISK writes onto a disk.
func (a *assessor) dd(c *cmd) {
	for _, s := range c.args {
		if v, ok := strings.CutPrefix(s, "of="); ok && isDisk(a.resolve(v)) {
			a.report(turnapi.RiskBlocked, RuleRawDiskWrite, "writes onto a disk ("+short(v)+")", c.pattern())
		}
	}
}

// diskWrite: a program that writes its operands, one of them a disk.
func (a *assessor) diskWrite(c *cmd) {
	for _, s := range operands(c.args) {
		if isDisk(a.resolve(s)) {
			a.report(turnapi.RiskBlocked, RuleRawDiskWrite, "writes onto a disk ("+c.name+" "+short(s)+")", c.pattern())
			return
		}
	}
}

// mkfs on a device formats it.
func (a *assessor) mkfs(c *cmd) {
	for _, s := range operands(c.args) {
		if strings.HasPrefix(a.resolve(s), "/dev/") {
			a.report(turnapi.RiskBlocked, RuleMkfsDevice, "formats a device ("+c.name+" "+short(s)+")", c.pattern())
			return
		}
	}
}

// wordsOf are exact words of texts.
func wordsOf(ss []string) []word {
	out := make([]word, len(ss))
	for i, s := range ss {
		out[i] = word{s, true}
	}
	return out
}

// pathPrograms are programs whose operands are all paths.
var pathPrograms = []string{"rm", "rmdir", "mv", "cp", "chmod", "chown", "chgrp", "setfacl", "rsync", "shred", "tee", "find"}

// canon is a generic pattern: the program, its short options merged and
// sorted, its long options sorted, then its operands in order with paths
// cleaned.
func canon(name string, args []string) string {
	paths := slices.Contains(pathPrograms, name)
	var letters []byte
	var longOpts, ops []string
	for i, arg := range args {
		switch {
		case arg == "--":
			for _, o := range args[i+1:] {
				ops = append(ops, cleanArg(o))
			}
			return canonJoin(name, letters, longOpts, ops)
		case strings.HasPrefix(arg, "--"):
			longOpts = append(longOpts, arg)
		case len(arg) > 1 && arg[0] == '-' && (arg[1] < '0' || arg[1] > '9'):
			letters = append(letters, arg[1:]...)
		case paths || strings.ContainsAny(arg, "/~") || strings.HasPrefix(arg, "."):
			ops = append(ops, cleanArg(arg))
		default:
			ops = append(ops, arg)
		}
	}
	return canonJoin(name, letters, longOpts, ops)
}

func canonJoin(name string, letters []byte, longOpts, ops []string) string {
	parts := []string{name}
	if len(letters) > 0 {
		slices.Sort(letters)
		parts = append(parts, "-"+string(slices.Compact(letters)))
	}
	slices.Sort(longOpts)
	parts = append(parts, slices.Compact(longOpts)...)
	parts = append(parts, ops...)
	return strings.Join(parts, " ")
}
