package approval

import (
	"slices"
	"strings"
)

// RuleNotReadOnly: outside the sandbox, a command that is not known to
// only read. Without the kernel as the boundary, nothing else runs without
// a person's approval.
const RuleNotReadOnly = "not_read_only"

// readOnlyPrograms only read and print, whatever their operands, but for
// the options readOnlyCheck refuses.
var readOnlyPrograms = []string{
	"cat", "tac", "ls", "dir", "tree", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "zgrep", "zcat", "bzcat", "xzcat",
	"file", "stat", "du", "df", "pwd", "echo", "printf", "true", "false", "test", "[", ":", "date", "cal", "whoami", "id", "groups",
	"uname", "hostname", "uptime", "which", "type", "basename", "dirname", "realpath", "readlink", "diff", "cmp", "comm", "cut",
	"tr", "sort", "uniq", "nl", "fold", "fmt", "column", "paste", "join", "expand", "unexpand", "rev", "od", "xxd", "hexdump",
	"strings", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "base64", "base32",
	"seq", "sleep", "printenv", "jq", "find", "awk", "gawk", "mawk", "sed", "git", "go", "tar", "ps", "free", "nproc", "lscpu",
	"getconf", "locale", "cd", "pushd", "popd", "dirs", "shift", "set", "exit", "return", "wait", "break", "continue", "times",
}

// namesNoFile are read-only programs whose arguments name no file they
// read: an argument the shell builds ("$X") is only text to them.
var namesNoFile = []string{"echo", "printf", "true", "false", ":", "sleep", "seq", "date", "cal", "whoami", "id", "groups",
	"uname", "hostname", "uptime", "which", "type", "basename", "dirname", "pwd", "printenv", "nproc", "free", "getconf",
	"locale", "cd", "pushd", "popd", "dirs", "shift", "set", "exit", "return", "wait", "break", "continue", "times", "ps"}

// gitReadOnly are git's subcommands that only read (some with options of
// their own refused below).
var gitReadOnly = []string{"status", "diff", "log", "show", "blame", "grep", "ls-files", "ls-tree", "rev-parse", "describe",
	"shortlog", "cat-file", "rev-list", "merge-base", "name-rev", "for-each-ref", "count-objects", "whatchanged", "version", "help",
	"branch", "tag", "remote", "config", "stash", "reflog"}

// readOnly reports whether c only reads. Pure.
func readOnly(c *cmd) bool {
	if !slices.Contains(readOnlyPrograms, c.name) || !c.allExact() && !slices.Contains(namesNoFile, c.name) {
		return false
	}
	has := func(names ...string) bool { return hasOpt(c.args, names...) }
	switch c.name {
	case "test", "[", "printf":
		// test -v and printf -v name a variable, whose subscript bash
		// evaluates ('a[$(cmd)]').
		return !slices.ContainsFunc(c.args, func(a string) bool { return strings.HasPrefix(a, "-v") })
	case "set":
		// Shell options only (set -euo pipefail), not positional values.
		return !slices.ContainsFunc(c.args, func(a string) bool {
			return !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") && !slices.Contains([]string{"errexit", "nounset",
				"pipefail", "xtrace", "verbose", "noglob", "noclobber"}, a)
		})
	case "sed":
		// Scripts with an e, r, R, w or W anywhere may run, read or write
		// files; a script from a file is not known.
		return !has("-i", "--in-place", "-f", "--file") && !slices.ContainsFunc(c.args, func(a string) bool {
			return strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "if")
		}) && !slices.ContainsFunc(sedScripts(c.args), func(s string) bool { return strings.ContainsAny(s, "erRwW") })
	case "uniq", "xxd":
		// uniq IN OUT and xxd IN OUT write OUT.
		return len(operands(c.args)) < 2
	case "tree":
		return !has("-o")
	case "file":
		return !has("-C", "--compile")
	case "rg":
		return !has("--pre", "--pre-glob", "--search-zip", "-z", "--hostname-bin")
	case "sort":
		return !has("-o", "--output", "--compress-program", "--files0-from")
	case "find":
		return !has("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls")
	case "awk", "gawk", "mawk":
		return !slices.ContainsFunc(c.args, func(a string) bool {
			return strings.ContainsAny(a, ">|") || strings.Contains(a, "system") || strings.Contains(a, "@include") || strings.Contains(a, "@load")
		}) && !has("-f", "--file", "-i", "--include", "-l", "--load", "-E", "--exec", "-W")
	case "tar":
		return tarLists(c.args)
	case "go":
		// go list -export, -compiled ... build; go doc and go env -w write.
		return len(c.args) > 0 && slices.Contains([]string{"version", "env", "help"}, c.args[0]) && !has("-w", "-u")
	case "git":
		return gitReadOnlyArgs(c.args)
	case "date":
		return !has("-s", "--set", "-f", "--file")
	case "hostname":
		return len(c.args) == 0 || strings.HasPrefix(c.args[0], "-") && !has("-F", "--file", "-b", "--boot")
	}
	return true
}

// tarLists reports whether tar's arguments only list an archive: -t (in a
// cluster, or the traditional first word) or --list, and no other
// operation or option that writes or runs a program.
func tarLists(args []string) bool {
	list := false
	for i, a := range args {
		switch {
		case a == "--list":
			list = true
		case strings.HasPrefix(a, "--") && (a == "--extract" || a == "--create" || a == "--append" || a == "--update" || a == "--get" ||
			a == "--delete" || a == "--catenate" || a == "--concatenate" || a == "--diff" || strings.HasPrefix(a, "--to-command") ||
			strings.HasPrefix(a, "--checkpoint-action") || strings.HasPrefix(a, "--use-compress-program") || strings.HasPrefix(a, "--info-script") ||
			strings.HasPrefix(a, "--new-volume-script") || strings.HasPrefix(a, "--rsh-command") || strings.HasPrefix(a, "--index-file")):
			return false
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") || i == 0 && !strings.HasPrefix(a, "-"):
			// A cluster: stop at the first letter that takes a value
			// (f, C, I ...): the rest is that value.
			for _, r := range strings.TrimPrefix(a, "-") {
				if strings.ContainsRune("cxruAdI", r) {
					return false
				}
				if r == 't' {
					list = true
				}
				if strings.ContainsRune("fCbFgKLNTVXH", r) {
					break
				}
			}
		}
	}
	return list
}

// gitReadOnlyArgs reports whether git's arguments only read: no -c (which
// may name a program to run), a read-only subcommand, and none of the
// options that write, run a helper or name another program.
func gitReadOnlyArgs(args []string) bool {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		switch a := args[i]; {
		case a == "-c" || strings.HasPrefix(a, "-c") || strings.HasPrefix(a, "--config-env") || strings.HasPrefix(a, "--exec-path="):
			return false
		case a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace":
			i += 2
			continue
		}
		i++
	}
	if i >= len(args) || !slices.Contains(gitReadOnly, args[i]) {
		return false
	}
	sub, rest := args[i], args[i+1:]
	if hasOpt(rest, "--output", "--ext-diff", "--textconv", "--exec", "--upload-pack", "--open-files-in-pager", "-O", "--receive-pack") {
		return false
	}
	listOnly := func(flags ...string) bool {
		for _, a := range rest {
			if !slices.Contains(flags, a) {
				return false
			}
		}
		return true
	}
	switch sub {
	case "branch":
		return listOnly("-a", "-r", "-v", "-vv", "--list", "--all", "--remotes", "--show-current", "--verbose", "--no-color", "--color")
	case "tag":
		return listOnly("-l", "--list", "-n")
	case "remote":
		return listOnly("-v", "--verbose")
	case "config":
		return len(rest) > 0 && slices.ContainsFunc(rest, func(a string) bool {
			return a == "--get" || a == "--get-all" || a == "--list" || a == "-l" || a == "--get-regexp"
		})
	case "stash":
		return len(rest) > 0 && (rest[0] == "list" || rest[0] == "show")
	case "reflog":
		return len(rest) == 0 || rest[0] == "show" || strings.HasPrefix(rest[0], "-")
	}
	return true
}

// sedScripts are sed's scripts: the values of -e and --expression, else
// its first operand.
func sedScripts(args []string) []string {
	ws := wordsOf(args)
	var out []string
	for i := range ws {
		if v, _ := optValue(ws, i, "-e", "--expression"); v.s != "" {
			out = append(out, v.s)
		}
	}
	if ops := operands(args); len(out) == 0 && len(ops) > 0 {
		out = append(out, ops[0])
	}
	return out
}
