package approval

import (
	"path"
	"strings"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Files programs write through their options and operands: compilers and
// sort -o, uniq OUT, split prefixes, patch, ssh-keygen -f, unzip -d, 7z -o,
// git clone DIR, find -fprint; and moves and permission changes of whole
// homes.

// outputFiles checks the files a program writes by its options.
func (a *assessor) outputFiles(c *cmd) {
	var outs []string
	switch c.name {
	case "gcc", "cc", "clang", "g++", "c++", "clang++", "ld", "as", "rustc", "javac", "tcc":
		outs = optValues(c.args, "-o")
	case "go":
		if len(c.args) > 0 && (c.args[0] == "build" || c.args[0] == "test") {
			outs = optValues(c.args, "-o")
		}
	case "sort":
		outs = optValues(c.args, "-o", "--output")
	case "uniq":
		p := opts{short: "fsw", permute: true, long: longs("skip-fields=", "skip-chars=", "check-chars=", "group=", "all-repeated=")}.parse(c.args)
		if len(p.operands) >= 2 {
			outs = p.operands[1:2]
		}
	case "split", "csplit":
		p := opts{short: "abCdlntf", permute: true, long: longs("suffix-length=", "bytes=", "line-bytes=", "lines=",
			"number=", "additional-suffix=", "separator=", "prefix=", "digits=", "suffix-format=", "filter=")}.parse(c.args)
		outs = optValues(c.args, "-f", "--prefix")
		if c.name == "split" && len(p.operands) >= 2 {
			outs = append(outs, p.operands[1])
		}
		for i := range outs {
			outs[i] += "aa"
		}
		for _, v := range optValues(c.args, "--filter") {
			a.shellText(c.call, v)
		}
	case "patch":
		p := opts{short: "pdiorDBFVYzgF", permute: true, long: longs("strip=", "directory=", "input=", "output=",
			"reject-file=", "ifdef=", "prefix=", "basename-prefix=", "fuzz=", "version-control=", "suffix=", "backup-if-mismatch", "quoting-style=")}.parse(c.args)
		outs = append(outs, p.operands...)
		if len(p.operands) > 0 {
			outs = p.operands[:1]
		}
		if o, ok := p.value("-o", "--output"); ok {
			outs = append(outs, o)
		}
		if d, ok := p.value("-d", "--directory"); ok {
			outs = append(outs, d+"/_file_")
		}
	case "ssh-keygen":
		if !clusterHas(c.args, 'l') && !clusterHas(c.args, 'y') && !clusterHas(c.args, 'F') {
			outs = optValues(c.args, "-f")
		}
	case "unzip":
		dirs := optValues(c.args, "-d")
		if len(dirs) == 0 && !clusterHas(c.args, 'l') && !clusterHas(c.args, 'p') && !clusterHas(c.args, 't') && !clusterHas(c.args, 'Z') {
			a.extractDir(c, ".")
		}
		for _, d := range dirs {
			outs = append(outs, d+"/_file_")
			a.extractDir(c, d)
		}
	case "7z", "7za", "7zr":
		if len(c.args) > 0 && (c.args[0] == "x" || c.args[0] == "e") && len(optValues(c.args, "-o")) == 0 {
			a.extractDir(c, ".")
		}
		for _, arg := range c.args {
			if d, ok := strings.CutPrefix(arg, "-o"); ok && d != "" {
				outs = append(outs, d+"/_file_")
				a.extractDir(c, d)
			}
		}
	case "wget":
		for _, d := range optValues(c.args, "-P", "--directory-prefix") {
			outs = append(outs, d+"/_file_")
		}
	case "curl":
		for _, d := range optValues(c.args, "--output-dir") {
			for _, o := range optValues(c.args, "-o", "--output") {
				outs = append(outs, path.Join(d, o))
			}
		}
	}
	for _, o := range outs {
		a.writeTarget(c.sc.resolve(o), c.name, c.pattern(), false)
	}
}

// extractDir checks where an archive is unpacked: onto / or a system
// directory is Blocked.
func (a *assessor) extractDir(c *cmd, dir string) {
	if dir = c.sc.resolve(dir); isRootTarget(dir) || isSystemDir(dir) {
		a.report(turnapi.RiskBlocked, RuleRootOverwrite, "extracts an archive over the root filesystem or a system directory ("+c.name+" "+short(dir)+")", c.pattern())
	}
}

// findOutputs: find -fprint, -fprint0, -fls and -fprintf write a file.
func (a *assessor) findOutputs(c *cmd) {
	for i := 0; i+1 < len(c.args); i++ {
		switch c.args[i] {
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			a.writeTarget(c.sc.resolve(c.args[i+1]), "find "+c.args[i], c.pattern(), false)
		}
	}
}

// gitCloneDir checks the directory git clone writes.
func (a *assessor) gitCloneDir(c *cmd, rest []string) {
	p := opts{short: "obuc", permute: true, long: longs("origin=", "branch=", "upload-pack=", "template=",
		"reference=", "reference-if-able=", "depth=", "shallow-since=", "shallow-exclude=", "config=",
		"separate-git-dir=", "jobs=", "server-option=", "filter=", "bundle-uri=", "ref-format=")}.parse(rest)
	for _, v := range append(p.values["-u"], p.values["--upload-pack"]...) {
		a.runsOption(c, "git clone --upload-pack", v, true)
	}
}

// wholeTreeMove reports moving away /, a home or a system directory.
func (a *assessor) wholeTreeMove(c *cmd, sources []string) {
	for _, s := range sources {
		s = c.sc.resolve(s)
		switch {
		case isRootTarget(s):
			a.report(turnapi.RiskBlocked, RuleRootDelete, "moves the root filesystem away ("+c.name+" "+short(s)+")", c.pattern())
		case isHomeRoot(s):
			a.report(turnapi.RiskBlocked, RuleHomeDelete, "moves a whole home directory away ("+c.name+" "+short(s)+")", c.pattern())
		case isSystemDir(s):
			a.report(turnapi.RiskBlocked, RuleSystemDirDelete, "moves a system directory away ("+c.name+" "+short(s)+")", c.pattern())
		}
	}
}

// linkMade remembers ln -s TARGET LINK, so that paths through LINK are
// seen as paths through TARGET.
func (a *assessor) linkMade(c *cmd, ops []string) {
	if len(ops) == 0 {
		return
	}
	target := ops[0]
	link := "./" + path.Base(target)
	if len(ops) >= 2 {
		link = ops[len(ops)-1]
	}
	link = path.Clean(c.sc.resolve(link))
	if !strings.HasPrefix(target, "/") && !isHomePath(target) && !strings.HasPrefix(target, "$") {
		target = joinDir(path.Dir(link), target)
	}
	if len(c.sc.links) < maxLinks {
		c.sc.links[link] = path.Clean(c.sc.resolve(target))
	}
}

// maxLinks bounds the symbolic links remembered.
const maxLinks = 64
