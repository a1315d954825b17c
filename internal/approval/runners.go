package approval

import (
	"strings"
)

// Programs that run another program, and options that make a program run
// a command.

// argWrapper is a wrapper whose options taking an argument are listed
// (single-dash long options such as mpirun -np included); its command is
// the first operand, or what follows "--".
func argWrapper(withArg ...string) wrapper {
	takes := map[string]bool{}
	for _, o := range withArg {
		takes[o] = true
	}
	return func(_ *assessor, _ call, args []field) ([]field, bool) {
		for i := 0; i < len(args); i++ {
			s := args[i].s
			switch {
			case s == "--":
				return args[i+1:], i+1 < len(args)
			case len(s) > 1 && s[0] == '-':
				if takes[s] {
					i++
				}
			default:
				return args[i:], true
			}
		}
		return nil, false
	}
}

// bwrapArgs is how many arguments each bwrap option takes.
var bwrapArgs = map[string]int{"--bind": 2, "--ro-bind": 2, "--dev-bind": 2, "--bind-try": 2, "--ro-bind-try": 2,
	"--dev-bind-try": 2, "--symlink": 2, "--setenv": 2, "--file": 2, "--bind-data": 2, "--ro-bind-data": 2,
	"--chmod": 2, "--chdir": 1, "--tmpfs": 1, "--proc": 1, "--dev": 1, "--dir": 1, "--uid": 1, "--gid": 1,
	"--hostname": 1, "--unsetenv": 1, "--lock-file": 1, "--sync-fd": 1, "--info-fd": 1, "--seccomp": 1,
	"--remount-ro": 1, "--exec-label": 1, "--file-label": 1, "--cap-add": 1, "--cap-drop": 1, "--perms": 1,
	"--size": 1, "--args": 1, "--userns": 1, "--userns2": 1, "--pidns": 1, "--mqueue": 1, "--overlay-src": 1,
	"--overlay": 3, "--tmp-overlay": 1, "--ro-overlay": 1, "--block-fd": 1, "--userns-block-fd": 1,
	"--json-status-fd": 1, "--argv0": 1, "--add-seccomp-fd": 1}

func bwrap(_ *assessor, _ call, args []field) ([]field, bool) {
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "--":
			return args[i+1:], i+1 < len(args)
		case strings.HasPrefix(s, "-"):
			i += bwrapArgs[s]
		default:
			return args[i:], true
		}
	}
	return nil, false
}

// sg GROUP [-c] COMMAND runs COMMAND with a shell.
func sg(a *assessor, base call, args []field) ([]field, bool) {
	s := strs(args)
	if len(s) > 0 && s[0] == "-" {
		s = s[1:]
	}
	if len(s) < 2 {
		return nil, false
	}
	rest := s[1:]
	if rest[0] == "-c" {
		rest = rest[1:]
	}
	a.shellText(base, strings.Join(rest, " "))
	return nil, false
}

// capsh ... -- ARGS runs bash with ARGS; --shell= names another shell.
func capsh(_ *assessor, _ call, args []field) ([]field, bool) {
	shell := "bash"
	for i, f := range args {
		if v, ok := strings.CutPrefix(f.s, "--shell="); ok {
			shell = v
		}
		if f.s == "--" {
			return append([]field{{s: shell, lit: true}}, args[i+1:]...), true
		}
	}
	return nil, false
}

// entr runs its command when files change; with -s through a shell.
func entr(a *assessor, base call, args []field) ([]field, bool) {
	p := opts{}.parse(strs(args))
	if len(p.index) == 0 {
		return nil, false
	}
	if p.has("-s") {
		a.shellText(base, p.operands[0])
		return nil, false
	}
	return args[p.index[0]:], true
}

// startStopDaemon runs --exec (or --startas) with the arguments after --.
func startStopDaemon(_ *assessor, _ call, args []field) ([]field, bool) {
	var prog []field
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "--":
			if prog == nil {
				return nil, false
			}
			return append(prog, args[i+1:]...), true
		case s == "-x" || s == "--exec" || s == "-a" || s == "--startas":
			if i+1 < len(args) {
				i++
				prog = []field{args[i]}
			}
		case strings.HasPrefix(s, "--exec=") || strings.HasPrefix(s, "--startas="):
			_, v, _ := strings.Cut(s, "=")
			prog = []field{{s: v, lit: args[i].lit}}
		}
	}
	return prog, prog != nil
}

// runcon CONTEXT CMD, or runcon with -u/-r/-t/-l options and CMD.
func runcon(a *assessor, base call, args []field) ([]field, bool) {
	if len(args) > 0 && !strings.HasPrefix(args[0].s, "-") {
		return args[1:], len(args) > 1
	}
	return argWrapper("-u", "-r", "-t", "-l", "--user", "--role", "--type", "--range")(a, base, args)
}

// setarch ARCH [options] CMD.
func setarch(a *assessor, base call, args []field) ([]field, bool) {
	if len(args) == 0 || strings.HasPrefix(args[0].s, "-") {
		return nil, false
	}
	return argWrapper()(a, base, args[1:])
}

// ipNetns: ip [options] netns exec NAME CMD (object and verb may be
// abbreviated).
func ipNetns(_ *assessor, _ call, args []field) ([]field, bool) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].s, "-") {
		switch strings.TrimLeft(args[i].s, "-") {
		case "n", "netns", "b", "batch", "rc", "rcvbuf", "f", "family", "l", "loops":
			i++
		}
		i++
	}
	if i+3 < len(args) && len(args[i].s) >= 2 && strings.HasPrefix("netns", args[i].s) &&
		args[i+1].s != "" && strings.HasPrefix("exec", args[i+1].s) {
		return args[i+3:], true
	}
	return nil, false
}

// terminalE: a terminal emulator runs what follows -e, -x or --.
func terminalE(_ *assessor, _ call, args []field) ([]field, bool) {
	for i, f := range args {
		if f.s == "-e" || f.s == "-x" || f.s == "--" || f.s == "--command" {
			return args[i+1:], i+1 < len(args)
		}
	}
	return nil, false
}

// dtach -n|-A|-c SOCKET [options] CMD.
func dtach(a *assessor, base call, args []field) ([]field, bool) {
	if len(args) < 3 || (args[0].s != "-n" && args[0].s != "-A" && args[0].s != "-c" && args[0].s != "-N") {
		return nil, false
	}
	return argWrapper("-e", "-r")(a, base, args[2:])
}

// perf record|stat|trace [options] CMD.
func perf(a *assessor, base call, args []field) ([]field, bool) {
	if len(args) == 0 || (args[0].s != "record" && args[0].s != "stat" && args[0].s != "trace") {
		return nil, false
	}
	return argWrapper("-e", "-o", "-p", "-t", "-F", "-c", "-C", "-G", "-r", "-m", "-u", "-I", "-D", "-x",
		"--event", "--output", "--pid", "--tid", "--freq", "--count", "--cpu", "--cgroup", "--repeat",
		"--mmap-pages", "--uid", "--delay", "--call-graph", "--field-separator")(a, base, args[1:])
}

// netShell: nc -e PROG / -c CMD and socat EXEC:/SYSTEM: addresses run a
// program wired to a network connection: whoever is at the other end
// drives it.
func (a *assessor) netShell(c *cmd) {
	for i, arg := range c.args {
		if c.name != "socat" {
			if (arg == "-e" || arg == "-c" || arg == "--exec" || arg == "--sh-exec" || arg == "--lua-exec") && i+1 < len(c.args) {
				a.danger(c, RuleCurlPipeShell, c.name+" runs a program for a network connection ("+short(arg+" "+c.args[i+1])+")")
				a.shellText(c.call, c.args[i+1])
			}
			continue
		}
		low := strings.ToLower(arg)
		for _, pre := range []string{"exec:", "system:"} {
			if rest, ok := strings.CutPrefix(low, pre); ok {
				cmd, _, _ := strings.Cut(arg[len(pre):len(pre)+len(rest)], ",")
				a.danger(c, RuleCurlPipeShell, "socat runs a program for a network connection ("+short(arg)+")")
				a.shellText(c.call, cmd)
			}
		}
	}
}

// addRunners adds the wrappers above to wrappers.
func addRunners() {
	for name, w := range map[string]wrapper{
		"pkexec":              argWrapper("--user"),
		"fakeroot":            argWrapper("-l", "--lib", "--faked", "-s", "-i", "-b"),
		"proot":               argWrapper("-r", "-b", "-m", "-w", "-q", "-k", "-v", "--rootfs", "--bind", "--mount", "--pwd", "--cwd", "--qemu", "--kernel-release", "--verbose"),
		"bwrap":               bwrap,
		"firejail":            argWrapper(),
		"setpriv":             argWrapper("--reuid", "--regid", "--ruid", "--euid", "--rgid", "--egid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig", "--selinux-label", "--apparmor-profile", "--landlock-access", "--landlock-rule"),
		"sg":                  sg,
		"capsh":               capsh,
		"prlimit":             argWrapper("-p", "--pid", "-o", "--output"),
		"numactl":             argWrapper("-i", "-m", "-N", "-C", "-p", "-P", "-w", "-b"),
		"faketime":            operandThen(opts{short: "p"}, 1),
		"torsocks":            argWrapper("-u", "-p", "-a", "-P", "--user", "--pass", "--address", "--port"),
		"proxychains":         argWrapper("-f"),
		"proxychains4":        argWrapper("-f"),
		"rlwrap":              argWrapper("-b", "-C", "-D", "-e", "-f", "-g", "-H", "-l", "-M", "-O", "-P", "-q", "-s", "-S", "-t", "-w", "-z"),
		"sshpass":             argWrapper("-p", "-f", "-d", "-P"),
		"xvfb-run":            argWrapper("-n", "-s", "-f", "-e", "-p", "-w", "--server-num", "--server-args", "--auth-file", "--error-file", "--xauth-protocol", "--wait"),
		"dbus-launch":         argWrapper("--config-file", "--autolaunch"),
		"dbus-run-session":    argWrapper("--config-file", "--dbus-daemon"),
		"ssh-agent":           argWrapper("-a", "-E", "-P", "-t", "-O"),
		"mpirun":              argWrapper("-np", "-n", "-c", "-H", "-host", "--host", "-hostfile", "--hostfile", "-machinefile", "-x", "-wdir", "--wdir", "-npernode", "-ppn", "--map-by", "--bind-to", "-f", "--mca", "-mca"),
		"mpiexec":             argWrapper("-np", "-n", "-c", "-H", "-host", "--host", "-hostfile", "--hostfile", "-machinefile", "-x", "-wdir", "--wdir", "-npernode", "-ppn", "--map-by", "--bind-to", "-f"),
		"valgrind":            argWrapper(),
		"catchsegv":           argWrapper(),
		"toybox":              argWrapper(),
		"entr":                entr,
		"start-stop-daemon":   startStopDaemon,
		"chpst":               argWrapper("-u", "-U", "-e", "-/", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f", "-c", "-r", "-t"),
		"cgexec":              argWrapper("-g"),
		"gdbserver":           operandThen(opts{}, 1),
		"systemd-inhibit":     argWrapper("--what", "--who", "--why", "--mode"),
		"caffeinate":          argWrapper("-t", "-w"),
		"runcon":              runcon,
		"setarch":             setarch,
		"linux32":             argWrapper(),
		"linux64":             argWrapper(),
		"i386":                argWrapper(),
		"x86_64":              argWrapper(),
		"ip":                  ipNetns,
		"xterm":               terminalE,
		"uxterm":              terminalE,
		"urxvt":               terminalE,
		"rxvt":                terminalE,
		"konsole":             terminalE,
		"alacritty":           terminalE,
		"x-terminal-emulator": terminalE,
		"gnome-terminal":      terminalE,
		"sem":                 parallel,
		"tsp":                 argWrapper("-L", "-D", "-W", "-N"),
		"dtach":               dtach,
		"perf":                perf,
		"ccache":              argWrapper("-M", "-F", "-o", "-d", "-k", "-X", "--max-size", "--max-files", "--set-config", "--get-config", "--dir", "--recompress"),
		"chronic":             argWrapper(),
		"ifne":                argWrapper(),
		"run-one":             argWrapper(),
		"run-this-one":        argWrapper(),
		"keep-one-running":    argWrapper(),
		"sandbox-exec":        argWrapper("-f", "-p", "-n", "-D"),
		"flatpak-spawn":       argWrapper(),
		"distrobox-host-exec": argWrapper(),
	} {
		wrappers[name] = w
	}
}
