package approval

import (
	"regexp"
	"slices"
	"strings"
)

var (
	shells       = set("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh")
	downloaders  = set("curl", "wget", "fetch", "http", "https", "xh", "lwp-request")
	sqlClients   = set("psql", "mysql", "mariadb", "sqlite3", "sqlite", "sqlcmd", "clickhouse-client", "clickhouse", "cockroach", "duckdb")
	diskTools    = set("fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "wipefs", "mkswap", "blkdiscard")
	powerCmds    = set("shutdown", "reboot", "halt", "poweroff")
	chmodModes   = set("777", "0777", "a+rwx", "a=rwx", "ugo+rwx", "ugo=rwx")
	deleteCmds   = set("rm", "unlink", "shred", "rmdir")
	touchCmds    = set("truncate", "touch", "mkdir", "rmdir", "unlink", "chattr", "setfacl")
	iptablesCmds = set("iptables", "ip6tables", "iptables-legacy", "ip6tables-legacy", "iptables-nft", "ip6tables-nft")

	// sqlDrop finds statements that destroy tables or databases.
	sqlDrop = regexp.MustCompile(`(?i)\b(?:drop\s+(?:table|database|schema)|truncate)\b`)
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// isPython matches python, python3, python3.12 ...
func isPython(name string) bool {
	return strings.HasPrefix(name, "python") || name == "pypy" || name == "pypy3"
}

// check applies the rules to a command without wrappers.
func (as *assessor) check(name string, args []string, depth int, subs bool) cmdInfo {
	info := cmdInfo{name: name, args: args, downloader: downloaders[name]}
	switch {
	case shells[name]:
		info.shell = true
		script, cmdMode, stdin := shellOptions(args)
		if cmdMode {
			as.shellText(script, depth, subs)
			return info
		}
		info.readsStdin = stdin
		if subs {
			as.report(Dangerous, RuleCurlPipeShell, "runs a downloaded script ("+name+" <(curl ...))")
		}
	case isPython(name) || name == "perl" || name == "ruby" || name == "node" || name == "nodejs" || name == "php" ||
		name == "source" || name == ".":
		info.readsStdin = interpreterReadsStdin(name, args)
		if subs {
			as.report(Dangerous, RuleCurlPipeShell, "runs a downloaded script ("+name+" <(curl ...))")
		}
		if isPython(name) {
			if k := slices.Index(args, "-m"); k >= 0 && k+1 < len(args) && strings.HasPrefix(args[k+1], "pip") {
				as.packages("pip", args[k+2:])
			}
		}
		if name == "perl" {
			as.inPlace(name, args, "eEIMm")
		}
	case name == "rm":
		as.rm(args)
	case name == "find":
		as.find(args, depth)
	case name == "git":
		as.git(args)
	case name == "dd":
		as.dd(args)
	case name == "mkfs" || strings.HasPrefix(name, "mkfs.") || name == "mke2fs":
		for _, a := range args {
			if strings.HasPrefix(a, "/dev/") {
				as.report(Blocked, RuleMkfsDevice, "formats a device ("+name+" "+short(a)+")")
			}
		}
		as.report(Dangerous, RuleDiskTool, "creates a filesystem ("+name+")")
	case diskTools[name]:
		if !(slices.Contains(args, "-l") || slices.Contains(args, "--list")) || name == "wipefs" || name == "mkswap" || name == "blkdiscard" {
			as.report(Dangerous, RuleDiskTool, "partitions or wipes a disk ("+name+")")
		}
	case name == "shred":
		for _, a := range positionals(args, "nsu", "iterations", "size", "remove") {
			if isDisk(a) {
				as.report(Blocked, RuleRawDiskWrite, "overwrites a disk device (shred "+short(a)+")")
			}
			if isSystemPath(a) {
				as.report(Dangerous, RuleSystemWrite, "destroys a file in a system path (shred "+short(a)+")")
			}
		}
	case name == "cp" || name == "mv" || name == "install" || name == "ln" || name == "rsync" || name == "tee":
		as.copies(name, args)
	case name == "sed":
		as.inPlace(name, args, "efl")
	case name == "chmod" || name == "chown" || name == "chgrp":
		as.perms(name, args)
	case touchCmds[name]:
		for _, a := range positionals(args, "sr", "size", "reference") {
			if isSystemPath(a) {
				as.report(Dangerous, RuleSystemWrite, "changes a system path ("+name+" "+short(a)+")")
			}
		}
	case powerCmds[name]:
		as.report(Dangerous, RuleShutdown, "shuts down or reboots the machine ("+name+")")
	case name == "init" || name == "telinit":
		if p := positionals(args, ""); len(p) > 0 && (p[0] == "0" || p[0] == "6") {
			as.report(Dangerous, RuleShutdown, "shuts down or reboots the machine ("+name+" "+p[0]+")")
		}
	case name == "systemctl":
		as.systemctl(args)
	case name == "service":
		if p := positionals(args, ""); len(p) >= 2 && (p[1] == "stop" || p[1] == "disable") {
			as.report(Dangerous, RuleServiceStop, "stops a system service (service "+short(p[0])+" "+p[1]+")")
		}
	case name == "kill":
		as.kill(args)
	case name == "killall" || name == "killall5":
		as.report(Dangerous, RuleKillAll, "kills processes by name ("+name+")")
	case name == "pkill":
		if hasKillSignal(args) {
			as.report(Dangerous, RuleKillAll, "force-kills processes by pattern (pkill -9)")
		}
	case name == "crontab":
		if clusterHas(args, 'r') {
			as.report(Dangerous, RuleCrontabRemove, "removes the user's crontab (crontab -r)")
		}
	case name == "history":
		if clusterHas(args, 'c') {
			as.report(Dangerous, RuleHistoryClear, "clears the shell history (history -c)")
		}
	case iptablesCmds[name]:
		for _, a := range args {
			if a == "-F" || strings.HasPrefix(a, "--flush") {
				as.report(Dangerous, RuleFirewallFlush, "flushes the firewall rules ("+name+" -F)")
			}
		}
	case name == "nft":
		if p := positionals(args, "fIcD", "file", "includepath", "define"); len(p) > 0 && p[0] == "flush" {
			as.report(Dangerous, RuleFirewallFlush, "flushes the firewall rules (nft flush)")
		}
	case name == "ufw":
		if p := positionals(args, ""); len(p) > 0 && (p[0] == "disable" || p[0] == "reset") {
			as.report(Dangerous, RuleFirewallFlush, "disables or resets the firewall (ufw "+p[0]+")")
		}
	case name == "dropdb":
		as.report(Dangerous, RuleSQLDrop, "drops a database (dropdb)")
	case name == "mysqladmin":
		if slices.Contains(positionals(args, "uhpPS"), "drop") {
			as.report(Dangerous, RuleSQLDrop, "drops a database (mysqladmin drop)")
		}
	default:
		as.packages(name, args)
	}
	return info
}

// clusterHas reports whether a short-option word ("-r", "-ir") holds c.
func clusterHas(args []string, c byte) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], c) >= 0 {
			return true
		}
	}
	return false
}

// shellOptions reads a shell's options: with -c it returns the script;
// otherwise stdin reports whether the shell reads its script from stdin.
func shellOptions(args []string) (script string, cmdMode, stdin bool) {
	i := 0
	sMode := false
	for i < len(args) {
		a := args[i]
		if a == "--" || a == "-" {
			i++
			break
		}
		if a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file" || a == "-C" || a == "--init-command" {
			i += 2
			continue
		}
		if s, ok := strings.CutPrefix(a, "--command="); ok {
			return s, true, false
		}
		if a == "--command" {
			cmdMode = true
			i++
			continue
		}
		if len(a) > 1 && (a[0] == '-' || a[0] == '+') {
			if a[0] == '-' && a[1] != '-' {
				cmdMode = cmdMode || strings.IndexByte(a, 'c') > 0
				sMode = sMode || strings.IndexByte(a, 's') > 0
			}
			i++
			continue
		}
		break
	}
	if cmdMode {
		if i < len(args) {
			return args[i], true, false
		}
		return "", true, false
	}
	return "", false, sMode || i >= len(args) || args[i] == "/dev/stdin"
}

// interpreterReadsStdin reports whether an interpreter runs the program
// on its stdin: no inline code (-c, -e, -r ...) and no script file.
func interpreterReadsStdin(name string, args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-" || a == "/dev/stdin" {
			return true
		}
		if len(a) < 2 || a[0] != '-' {
			return false // a script file
		}
		switch {
		case isPython(name):
			if a == "-W" || a == "-X" {
				i++
			} else if a[1] != '-' && strings.ContainsAny(a[1:], "cm") {
				return false
			}
		case name == "perl" || name == "ruby":
			if a[1] != '-' && strings.ContainsAny(a[1:], "eE") {
				return false
			}
		case name == "node" || name == "nodejs":
			switch a {
			case "-e", "--eval", "-p", "--print":
				return false
			case "-r", "--require":
				i++
			}
		case name == "php":
			if a == "-r" || a == "-f" {
				return false
			}
		}
	}
	return name != "source" && name != "."
}

// rm: recursive deletes need approval, of / or a home or a system directory
// they are refused.
func (as *assessor) rm(args []string) {
	recursive, noPreserve := false, false
	var targets []string
	opts := true
	for _, a := range args {
		if opts && a == "--" {
			opts = false
			continue
		}
		if opts && len(a) > 1 && a[0] == '-' {
			if name, ok := strings.CutPrefix(a, "--"); ok {
				name, _, _ = strings.Cut(name, "=")
				recursive = recursive || name != "" && strings.HasPrefix("recursive", name)
				noPreserve = noPreserve || name != "" && strings.HasPrefix("no-preserve-root", name)
			} else if strings.ContainsAny(a[1:], "rR") {
				recursive = true
			}
			continue
		}
		targets = append(targets, a)
	}
	if recursive {
		for _, t := range targets {
			switch {
			case isRootTarget(t):
				as.report(Blocked, RuleRootDelete, "recursive delete of the root filesystem (rm -r "+short(t)+")")
			case isHomeRoot(t):
				as.report(Blocked, RuleHomeDelete, "recursive delete of a whole home directory (rm -r "+short(t)+")")
			case isSystemDir(t):
				as.report(Blocked, RuleSystemDirDelete, "recursive delete of a system directory (rm -r "+short(t)+")")
			}
		}
		if noPreserve {
			as.report(Blocked, RuleRootDelete, "recursive delete without root protection (rm --no-preserve-root)")
		}
		as.report(Dangerous, RuleRecursiveDelete, "recursive delete (rm -r)")
	}
	for _, t := range targets {
		if isSystemPath(t) {
			as.report(Dangerous, RuleSystemWrite, "deletes in a system path (rm "+short(t)+")")
		}
	}
}

// find: -delete and -exec rm delete whatever matches.
func (as *assessor) find(args []string, depth int) {
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-delete":
			as.report(Dangerous, RuleRecursiveDelete, "recursive delete (find -delete)")
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			if depth >= maxDepth {
				as.tooDeep = true
				return
			}
			info := as.words(args[i+1:j], depth+1, false)
			if deleteCmds[info.name] {
				as.report(Dangerous, RuleRecursiveDelete, "recursive delete (find "+args[i]+" "+info.name+")")
			}
			i = j
		}
	}
}

func (as *assessor) git(args []string) {
	k := skipOptions(args, "Cc", "git-dir", "work-tree", "namespace", "exec-path", "config-env")
	if k >= len(args) {
		return
	}
	sub, rest := args[k], args[k+1:]
	switch sub {
	case "clean":
		force := clusterHas(rest, 'f') || slices.Contains(rest, "--force")
		dry := clusterHas(rest, 'n') || slices.Contains(rest, "--dry-run")
		if force && !dry {
			as.report(Dangerous, RuleGitClean, "deletes untracked files (git clean -f)")
		}
	case "reset":
		if slices.Contains(rest, "--hard") {
			as.report(Dangerous, RuleGitResetHard, "discards uncommitted changes (git reset --hard)")
		}
	case "push":
		force := clusterHas(rest, 'f')
		for _, a := range rest {
			if a == "--force" || strings.HasPrefix(a, "--force-with-lease") || (strings.HasPrefix(a, "+") && len(a) > 1) {
				force = true
			}
		}
		if force {
			as.report(Dangerous, RuleGitForcePush, "rewrites remote history (git push --force)")
		}
	}
}

func (as *assessor) dd(args []string) {
	for _, a := range args {
		of, ok := strings.CutPrefix(a, "of=")
		if !ok {
			continue
		}
		if isDisk(of) {
			as.report(Blocked, RuleRawDiskWrite, "writes raw data onto a disk device (dd of="+short(of)+")")
		}
		if isSystemPath(of) {
			as.report(Dangerous, RuleSystemWrite, "writes to a system path (dd of="+short(of)+")")
		}
	}
}

// copies: cp, mv, install, ln, rsync and tee write to their destination.
func (as *assessor) copies(name string, args []string) {
	var dests []string
	appendMode := false
	switch name {
	case "tee":
		dests = positionals(args, "")
		appendMode = clusterHas(args, 'a') || slices.Contains(args, "--append")
	default:
		argLetters := "St"
		if name == "rsync" {
			argLetters = "efTB"
		}
		ops := positionals(args, argLetters, "suffix", "target-directory", "rsh", "filter", "exclude", "include", "temp-dir", "block-size")
		target := ""
		for i, a := range args {
			if t, ok := strings.CutPrefix(a, "--target-directory="); ok {
				target = t
			} else if a == "-t" && i+1 < len(args) {
				target = args[i+1]
			}
		}
		switch {
		case target != "":
			dests = []string{target}
		case len(ops) >= 2:
			dests = ops[len(ops)-1:]
		}
		if name == "mv" {
			dests = append(dests, ops...) // moving a system file away changes it too
		}
	}
	for _, d := range dests {
		switch {
		case isDisk(d) && (name == "cp" || name == "tee" || name == "install"):
			as.report(Blocked, RuleRawDiskWrite, "writes raw data onto a disk device ("+name+" "+short(d)+")")
		case isSystemPath(d):
			as.report(Dangerous, RuleSystemWrite, "writes to a system path ("+name+" "+short(d)+")")
		case isHomeConfig(d, appendMode):
			as.report(Dangerous, RuleDotfileWrite, "overwrites a login or SSH file in the home directory ("+name+" "+short(d)+")")
		}
	}
}

// inPlace: sed -i and perl -i edit their file operands.
func (as *assessor) inPlace(name string, args []string, argLetters string) {
	edit := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--in-place") {
			edit = true
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' {
			i := strings.IndexByte(a, 'i')
			if i > 0 && !strings.ContainsAny(a[1:i], argLetters) {
				edit = true
			}
		}
	}
	if !edit {
		return
	}
	for _, a := range positionals(args, argLetters) {
		if isSystemPath(a) {
			as.report(Dangerous, RuleSystemWrite, "edits a file in a system path in place ("+name+" -i "+short(a)+")")
		}
	}
}

// perms: chmod, chown and chgrp.
func (as *assessor) perms(name string, args []string) {
	recursive := clusterHas(args, 'R') || slices.Contains(args, "--recursive")
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		// chmod -w file: a mode that looks like an option.
		if len(a) < 2 || a[0] != '-' || (name == "chmod" && strings.Trim(a[1:], "rwxXst") == "") {
			ops = append(ops, a)
		}
	}
	reference := false
	for _, a := range args {
		reference = reference || strings.HasPrefix(a, "--reference")
	}
	mode := ""
	if !reference && len(ops) > 0 {
		mode, ops = ops[0], ops[1:]
	}
	if recursive {
		for _, t := range ops {
			if isRootTarget(t) || isSystemDir(t) {
				if name == "chmod" {
					as.report(Blocked, RuleRootChmod, "recursive permission change of the root filesystem or a system directory (chmod -R "+short(t)+")")
				} else {
					as.report(Blocked, RuleRootChown, "recursive ownership change of the root filesystem or a system directory ("+name+" -R "+short(t)+")")
				}
			}
		}
		if name == "chmod" && chmodModes[mode] {
			as.report(Dangerous, RuleChmod777, "makes files world-writable recursively (chmod -R "+mode+")")
		}
	}
	for _, t := range ops {
		if isSystemPath(t) {
			as.report(Dangerous, RuleSystemWrite, "changes permissions in a system path ("+name+" "+short(t)+")")
		}
	}
}

func (as *assessor) systemctl(args []string) {
	p := positionals(args, "tpHMnos", "type", "property", "host", "machine", "lines", "output", "signal", "state", "root", "kill-whom")
	if len(p) == 0 {
		return
	}
	switch p[0] {
	case "reboot", "poweroff", "halt", "kexec", "soft-reboot":
		as.report(Dangerous, RuleShutdown, "shuts down or reboots the machine (systemctl "+p[0]+")")
	case "stop", "disable", "mask", "kill", "isolate":
		as.report(Dangerous, RuleServiceStop, "stops or disables a system service (systemctl "+p[0]+")")
	}
}

func (as *assessor) kill(args []string) {
	signal, ended := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !ended {
			if a == "--" {
				ended = true
				continue
			}
			if a == "-s" || a == "-n" {
				i++
				signal = true
				continue
			}
			if !signal && len(a) > 1 && a[0] == '-' {
				signal = true
				continue
			}
		}
		if a == "-1" || a == "1" {
			as.report(Dangerous, RuleKillAll, "kills every process or init (kill "+a+")")
		}
	}
}

// hasKillSignal reports whether pkill is told to send SIGKILL.
func hasKillSignal(args []string) bool {
	for i, a := range args {
		v := ""
		switch {
		case a == "--signal" && i+1 < len(args):
			v = args[i+1]
		case strings.HasPrefix(a, "--signal="):
			v = a[len("--signal="):]
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			v = a[1:]
		}
		v = strings.TrimPrefix(strings.ToUpper(v), "SIG")
		if v == "9" || v == "KILL" {
			return true
		}
	}
	return false
}

// packages: removing installed packages.
func (as *assessor) packages(name string, args []string) {
	first := func(shortArgs string) string {
		if p := positionals(args, shortArgs); len(p) > 0 {
			return p[0]
		}
		return ""
	}
	remove := ""
	switch {
	case name == "apt" || name == "apt-get" || name == "aptitude":
		if s := first("octa"); s == "remove" || s == "purge" || s == "autoremove" || s == "autopurge" {
			remove = name + " " + s
		}
	case name == "dpkg":
		for _, a := range args {
			if a == "-r" || a == "-P" || a == "--remove" || a == "--purge" {
				remove = "dpkg " + a
			}
		}
	case name == "yum" || name == "dnf" || name == "microdnf" || name == "tdnf" || name == "zypper":
		if s := first("cdex"); s == "remove" || s == "erase" || s == "autoremove" || s == "rm" {
			remove = name + " " + s
		}
	case name == "pacman":
		for _, a := range args {
			if strings.HasPrefix(a, "-R") || a == "--remove" {
				remove = "pacman " + a
			}
		}
	case name == "apk":
		if first("X") == "del" {
			remove = "apk del"
		}
	case name == "snap":
		if first("") == "remove" {
			remove = "snap remove"
		}
	case name == "brew":
		if s := first(""); s == "uninstall" || s == "remove" || s == "rm" {
			remove = "brew " + s
		}
	case strings.HasPrefix(name, "pip") || name == "gem" || name == "conda" || name == "mamba":
		if s := first("r"); s == "uninstall" || (s == "remove" && (name == "conda" || name == "mamba")) {
			remove = name + " " + s
		}
	case name == "npm" || name == "pnpm":
		global := slices.Contains(args, "-g") || slices.Contains(args, "--global") || slices.Contains(args, "--location=global")
		if s := first(""); global && (s == "uninstall" || s == "remove" || s == "rm" || s == "un" || s == "r" || s == "unlink") {
			remove = name + " " + s + " -g"
		}
	case name == "yarn":
		if p := positionals(args, ""); len(p) >= 2 && p[0] == "global" && p[1] == "remove" {
			remove = "yarn global remove"
		}
	}
	if remove != "" {
		as.report(Dangerous, RulePackageRemove, "removes installed packages ("+short(remove)+")")
	}
}

// sqlPipeline: a SQL client fed a DROP or TRUNCATE by its arguments, a
// heredoc or an earlier stage of the pipeline.
func (as *assessor) sqlPipeline(p []*command, infos []cmdInfo) {
	client := ""
	for _, in := range infos {
		if sqlClients[in.name] {
			client = in.name
			break
		}
	}
	if client == "" {
		return
	}
	for _, c := range p {
		for _, t := range append(append([]string(nil), c.words...), c.stdin...) {
			if sqlDrop.MatchString(t) {
				as.report(Dangerous, RuleSQLDrop, "drops or truncates database data ("+client+": DROP/TRUNCATE)")
				return
			}
		}
	}
}
