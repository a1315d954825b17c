package approval

import (
	"slices"
	"strings"
)

// keywords are reserved words that may precede a command.
var keywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "do": true,
	"while": true, "until": true, "!": true, "{": true, "[[": true,
}

// isAssignment reports whether w is a NAME=value prefix.
func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	name := strings.TrimSuffix(w[:eq], "+")
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// baseName is the last element of a command path: "/usr/bin/rm" → "rm".
func baseName(w string) string {
	return w[strings.LastIndexByte(w, '/')+1:]
}

// skipOptions returns the index of the first operand of args: options
// come first, short ones may be clustered, the letters in short and the
// long names in long take an argument, and "--" ends them.
func skipOptions(args []string, short string, long ...string) int {
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" {
			return i + 1
		}
		if len(a) < 2 || a[0] != '-' {
			return i
		}
		i++
		if takesArg(a, short, long) {
			i++
		}
	}
	return min(i, len(args))
}

// positionals returns the operands of args wherever they appear (GNU tools
// accept options after operands), skipping option arguments as skipOptions
// does.
func positionals(args []string, short string, long ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if len(a) < 2 || a[0] != '-' {
			out = append(out, a)
			continue
		}
		if takesArg(a, short, long) {
			i++
		}
	}
	return out
}

// takesArg reports whether the option word a ("--name", "-xvf") is followed
// by its argument as the next word: a long option without "=" named in
// long, or a short cluster whose last letter is in short (a letter of short
// earlier in the cluster takes the rest of the word instead).
func takesArg(a, short string, long []string) bool {
	if a[1] == '-' {
		return !strings.Contains(a, "=") && slices.Contains(long, a[2:])
	}
	for k := 1; k < len(a); k++ {
		if strings.IndexByte(short, a[k]) >= 0 {
			return k == len(a)-1
		}
	}
	return false
}

// words removes wrappers from a simple command and checks what is left.
// subs reports a downloader inside the command's substitutions.
func (as *assessor) words(w []string, depth int, subs bool) cmdInfo {
	i := 0
	for i < len(w) {
		a := w[i]
		if isAssignment(a) || keywords[a] {
			i++
			continue
		}
		if strings.HasPrefix(a, "-") {
			// Not a command a wrapper would run ("sudo -x ..." reads it as
			// an option), so not one to judge by its name either.
			return cmdInfo{name: a}
		}
		args := w[i+1:]
		switch baseName(a) {
		case "sudo":
			i += 1 + skipOptions(args, "CDgpRrtTuU", "user", "group", "close-from", "chdir", "prompt", "role", "type", "command-timeout", "other-user", "chroot", "host")
		case "doas":
			i += 1 + skipOptions(args, "uC")
		case "nohup", "builtin", "command", "busybox", "setsid", "unbuffer":
			i += 1 + skipOptions(args, "")
		case "time":
			i += 1 + skipOptions(args, "fo", "format", "output")
		case "exec":
			i += 1 + skipOptions(args, "a")
		case "nice":
			i += 1 + skipOptions(args, "n", "adjustment")
		case "ionice":
			i += 1 + skipOptions(args, "cnpP", "class", "classdata", "pid", "pgid", "uid")
		case "stdbuf":
			i += 1 + skipOptions(args, "ioe", "input", "output", "error")
		case "timeout":
			k := skipOptions(args, "sk", "signal", "kill-after")
			i += 1 + min(k+1, len(args)) // the duration
		case "xargs":
			i += 1 + skipOptions(args, "aEdILnPs", "arg-file", "delimiter", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var")
		case "env":
			k, script, split := envOptions(args)
			if split {
				as.shellText(strings.Join(append([]string{script}, args[k:]...), " "), depth, subs)
				return cmdInfo{name: "env"}
			}
			i += 1 + k
		case "eval":
			as.shellText(strings.Join(args, " "), depth, subs)
			return cmdInfo{name: "eval"}
		default:
			return as.check(baseName(a), args, depth, subs)
		}
	}
	return cmdInfo{}
}

// envOptions skips env's options; with -S it returns the split string.
func envOptions(args []string) (k int, script string, split bool) {
	for k < len(args) {
		a := args[k]
		switch {
		case a == "--":
			return k + 1, "", false
		case a == "-S" || a == "--split-string":
			if k+1 < len(args) {
				return k + 2, args[k+1], true
			}
			return len(args), "", false
		case strings.HasPrefix(a, "--split-string="):
			return k + 1, a[len("--split-string="):], true
		case strings.HasPrefix(a, "-S"):
			return k + 1, a[2:], true
		case a == "-u" || a == "-C" || a == "--unset" || a == "--chdir":
			k += 2
		case len(a) > 1 && a[0] == '-':
			k++
		default:
			return k, "", false
		}
	}
	return min(k, len(args)), "", false
}

// shellText checks a script a shell is told to run; a script built from a
// download runs that download.
func (as *assessor) shellText(src string, depth int, subs bool) {
	if subs {
		as.report(Dangerous, RuleCurlPipeShell, "runs a downloaded script (sh -c \"$(curl ...)\")")
	}
	as.text(src, depth+1)
}
