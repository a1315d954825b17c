package approval

import (
	"path"
	"slices"
	"strings"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// writeTarget checks a file a command writes: onto a disk device is
// Blocked. (Any other write asks outside the sandbox, rule not_read_only,
// and inside it the kernel holds it to the writable roots.) how names the
// write in reasons and patterns ("> ", "tee", "cp").
func (a *assessor) writeTarget(t, how, pat string, redirect bool) {
	switch {
	case isDisk(t) && redirect:
		a.report(turnapi.RiskBlocked, RuleDiskRedirect, "redirects output onto a disk device ("+how+" "+short(t)+")", pat)
	case isDisk(t):
		a.report(turnapi.RiskBlocked, RuleRawDiskWrite, "writes raw data onto a disk device ("+how+" "+short(t)+")", pat)
	}
}

var (
	cpOpts    = opts{short: "St", permute: true, long: longs("suffix=", "target-directory=", "backup", "sparse=", "reflink", "preserve", "no-preserve=")}
	installOp = opts{short: "gmoStT", permute: true, long: longs("group=", "mode=", "owner=", "suffix=", "target-directory=")}
	teeOpts   = opts{permute: true, long: longs("append", "ignore-interrupts", "output-error")}
)

// copies: cp, mv, install, ln and tee write to their destination; mv
// changes its sources too.
func (a *assessor) copies(c *cmd) {
	var dests []string
	if c.name == "tee" {
		dests = teeOpts.parse(c.args).operands
	} else {
		o := cpOpts
		if c.name == "install" {
			o = installOp
		}
		p := o.parse(c.args)
		if t, ok := p.value("-t", "--target-directory"); ok {
			dests = []string{t}
			dests = append(dests, intoDir(t, p.operands)...)
		} else if len(p.operands) >= 2 || (c.name == "ln" && len(p.operands) == 1) {
			dests = p.operands[len(p.operands)-1:]
			// The destination may be a directory: cp .bashrc ~ writes
			// ~/.bashrc.
			dests = append(dests, intoDir(dests[0], p.operands[:len(p.operands)-1])...)
		}
		if c.name == "mv" {
			dests = append(dests, p.operands...)
			if _, ok := p.value("-t", "--target-directory"); ok {
				a.wholeTreeMove(c, p.operands)
			} else if len(p.operands) >= 2 {
				a.wholeTreeMove(c, p.operands[:len(p.operands)-1])
			}
		}
	}
	for _, d := range dests {
		d = c.sc.resolve(d)
		if isDisk(d) && c.name != "cp" && c.name != "tee" && c.name != "install" {
			continue
		}
		a.writeTarget(d, c.name, c.pattern(), false)
	}
	if c.name == "ln" && (clusterHas(c.args, 's') || hasAny(c.args, "--symbolic")) {
		a.linkMade(c, cpOpts.parse(c.args).operands)
	}
}

// writesOperands: sponge FILE and ed FILE write the files they name.
func (a *assessor) writesOperands(c *cmd) {
	for _, f := range (opts{permute: true}).parse(c.args).operands {
		a.writeTarget(c.sc.resolve(f), c.name, c.pattern(), false)
	}
}

// intoDir is where sources copied or moved into directory dir land.
func intoDir(dir string, sources []string) []string {
	var out []string
	for _, src := range sources {
		if b := path.Base(src); b != "." && b != "/" && b != ".." {
			out = append(out, strings.TrimSuffix(dir, "/")+"/"+b)
		}
	}
	return out
}

// dd writes to of=.
func (a *assessor) dd(c *cmd) {
	for _, arg := range c.args {
		if of, ok := strings.CutPrefix(arg, "of="); ok {
			a.writeTarget(c.sc.resolve(of), "dd of=", c.pattern(), false)
		}
	}
}

var rsyncOpts = opts{short: "efTBM", permute: true, long: longs("rsh=", "filter=", "exclude=", "include=", "temp-dir=",
	"block-size=", "suffix=", "backup-dir=", "compare-dest=", "copy-dest=", "link-dest=", "chmod=", "chown=",
	"log-file=", "password-file=", "exclude-from=", "include-from=", "files-from=", "max-size=", "min-size=",
	"timeout=", "partial-dir=", "rsync-path=", "out-format=", "bwlimit=", "port=", "delete", "delete-before",
	"delete-during", "delete-delay", "delete-after", "delete-excluded", "delete-missing-args", "remove-source-files")}

// rsync writes to its last operand; with --delete it removes what the
// source lacks, which onto / or a disk wipes the machine.
func (a *assessor) rsync(c *cmd) {
	p := rsyncOpts.parse(c.args)
	if len(p.operands) < 2 {
		return
	}
	for _, f := range []string{"-e", "--rsh", "--rsync-path"} {
		for _, v := range p.values[f] {
			if w := strings.Fields(v); len(w) == 0 || w[0] != "ssh" || strings.Contains(strings.ToLower(v), "command") {
				a.runsOption(c, "rsync "+f+" "+v, v, true)
			} else {
				a.shellText(c.call, v)
			}
		}
	}
	dest := p.operands[len(p.operands)-1]
	if i := strings.IndexByte(dest, ':'); i >= 0 && !strings.Contains(dest[:i], "/") {
		return // a remote destination
	}
	dest = c.sc.resolve(dest)
	del := false
	for _, f := range p.flags {
		del = del || strings.HasPrefix(f, "--del")
	}
	if p.has("--remove-source-files") {
		for _, s := range p.operands[:len(p.operands)-1] {
			s = c.sc.resolve(s)
			a.wholeTreeDelete(s, "rsync --remove-source-files "+short(s), c.pattern())
			a.report(turnapi.RiskDangerous, RuleRecursiveDelete, "rsync --remove-source-files removes what it copies", c.pattern())
		}
	}
	pat := "rsync --delete " + cleanArg(dest)
	switch {
	case del && (isRootTarget(dest) || isDisk(dest) || isSystemDir(dest) || isHomeRoot(dest)):
		a.report(turnapi.RiskBlocked, RuleRootOverwrite, "rsync --delete onto the root filesystem, a home, a system directory or a disk ("+short(dest)+")", pat)
	case del:
		a.report(turnapi.RiskDangerous, RuleRecursiveDelete, "rsync --delete removes files in "+short(dest), pat)
	}
	a.writeTarget(dest, "rsync", c.pattern(), false)
}

var tarOpts = opts{short: "fCbTXKNLVIFg", permute: true, long: longs("file=", "directory=", "to-command=",
	"checkpoint-action=", "use-compress-program=", "info-script=", "new-volume-script=", "rsh-command=",
	"files-from=", "exclude-from=", "exclude=", "blocking-factor=", "owner=", "group=", "mode=", "transform=",
	"xform=", "listed-incremental=", "index-file=", "format=", "volno-file=", "label=", "newer=", "after-date=",
	"extract", "get", "create", "append", "update", "catenate", "concatenate", "list", "diff", "compare", "delete",
	"absolute-names")}

// tar writes the archive it creates and the files it extracts, and runs
// the commands some of its options name.
func (a *assessor) tar(c *cmd) {
	args := c.args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		args = append([]string{"-" + args[0]}, args[1:]...) // tar cvf x.tar ...
	}
	p := tarOpts.parse(args)
	for _, f := range []string{"--to-command", "--use-compress-program", "-I", "--info-script", "-F",
		"--new-volume-script", "--rsh-command"} {
		for _, v := range p.values[f] {
			a.shellText(c.call, v)
		}
	}
	for _, v := range p.values["--checkpoint-action"] {
		if s, ok := strings.CutPrefix(v, "exec="); ok {
			a.shellText(c.call, s)
		}
	}
	archive, hasArchive := p.value("-f", "--file")
	switch {
	case p.has("-c", "-r", "-u", "-A", "--create", "--append", "--update", "--catenate", "--concatenate"):
		if hasArchive && archive != "-" {
			a.writeTarget(c.sc.resolve(archive), "tar -cf", c.pattern(), false)
		}
		// tar -C DIR NAME archives DIR/NAME.
		for _, dir := range append(slices.Clone(p.values["-C"]), p.values["--directory"]...) {
			for _, op := range p.operands {
				if f := c.sc.resolve(strings.TrimSuffix(dir, "/") + "/" + op); isSecretFile(f) {
					a.report(turnapi.RiskDangerous, RuleSecretRead, "reads a secret file (tar -C "+short(dir)+" "+short(op)+")", c.pattern())
					return
				}
			}
		}
	case p.has("-x", "--extract", "--get"):
		dir, _ := p.value("-C", "--directory")
		if dir == "" {
			dir = "."
		}
		dir = c.sc.resolve(dir)
		if dir == "." {
			return
		}
		pat := "tar -x -f " + cleanArg(archive) + " -C " + cleanArg(dir)
		if isRootTarget(dir) || isDisk(dir) || isSystemDir(dir) {
			a.report(turnapi.RiskBlocked, RuleRootOverwrite, "extracts an archive over the root filesystem or a system directory (tar -C "+short(dir)+")", pat)
		}
	}
}

var sedOpts = opts{short: "efl", permute: true, long: longs("expression=", "file=", "line-length=", "in-place", "quiet",
	"silent", "regexp-extended", "separate", "null-data", "unbuffered", "debug", "sandbox", "posix", "follow-symlinks")}

// sed runs what its script's e and s///e commands name; an edit in place
// asks outside the sandbox (not_read_only) like any write.
func (a *assessor) sed(c *cmd) { a.sedRuns(c) }

// touches: truncate, touch, mkdir ... change the paths they name.
func (a *assessor) touches(c *cmd) {
	p := opts{short: "sr", permute: true, long: longs("size=", "reference=")}.parse(c.args)
	for _, t := range p.operands {
		t = c.sc.resolve(t)
		if c.name == "setfacl" && (clusterHas(c.args, 'R') || hasAny(c.args, "--recursive")) &&
			(isRootTarget(t) || isSystemDir(t) || isHomeRoot(t)) {
			a.report(turnapi.RiskBlocked, RuleRootChmod, "recursive ACL change of the root filesystem, a home or a system directory (setfacl -R "+short(t)+")", c.pattern())
		}
	}
}

// perms: chmod, chown and chgrp.
func (a *assessor) perms(c *cmd) {
	args := c.args
	recursive := clusterHas(args, 'R') || slices.Contains(args, "--recursive")
	var ops []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		// chmod -w file: a mode that looks like an option.
		if len(arg) < 2 || arg[0] != '-' || (c.name == "chmod" && strings.Trim(arg[1:], "rwxXst") == "") {
			ops = append(ops, arg)
		}
	}
	reference := false
	for _, arg := range args {
		reference = reference || strings.HasPrefix(arg, "--reference")
	}
	mode := ""
	if !reference && len(ops) > 0 {
		mode, ops = ops[0], ops[1:]
	}
	for i := range ops {
		ops[i] = c.sc.resolve(ops[i])
	}
	flag := c.name
	if recursive {
		flag += " -R"
	}
	pat := flag + " " + mode + " " + strings.Join(cleanAll(ops), " ")
	if recursive {
		for _, t := range ops {
			if isRootTarget(t) || isSystemDir(t) || isHomeRoot(t) {
				if c.name == "chmod" {
					a.report(turnapi.RiskBlocked, RuleRootChmod, "recursive permission change of the root filesystem, a home or a system directory (chmod -R "+short(t)+")", pat)
				} else {
					a.report(turnapi.RiskBlocked, RuleRootChown, "recursive ownership change of the root filesystem, a home or a system directory ("+c.name+" -R "+short(t)+")", pat)
				}
			}
		}
	}
}

// cleanAll cleans every path of a list.
func cleanAll(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = cleanArg(p)
	}
	return out
}
