package approval

import (
	"slices"
	"strings"
)

// gitGlobal are git's options before the subcommand that take a value.
var gitGlobal = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}

// gitSub splits git's arguments into its subcommand and the rest.
func gitSub(args []string) (sub string, rest []string) {
	ws := wordsOf(args)
	for i := 0; i < len(args); {
		if !strings.HasPrefix(args[i], "-") {
			return args[i], args[i+1:]
		}
		_, next := optValue(ws, i, gitGlobal...)
		if args[i] == "-C" || args[i] == "-c" {
			next = i + 2
		}
		i = next
	}
	return "", nil
}

// git: the subcommands that discard work in the repository (clean -f,
// reset --hard, checkout -f, stash drop ...) or elsewhere (push --force).
func (a *assessor) git(c *cmd) {
	if slices.Contains(c.args, "-C") {
		a.dir = unknownDir
	}
	sub, rest := gitSub(c.args)
	has := func(names ...string) bool { return hasOpt(rest, names...) }
	first := ""
	if len(rest) > 0 {
		first = rest[0]
	}
	switch {
	case sub == "clean" && has("-f", "--force"):
		a.danger(c, RuleGitClean, "deletes untracked files (git clean -f)")
	case sub == "reset" && has("--hard"):
		a.danger(c, RuleGitResetHard, "discards uncommitted changes (git reset --hard)")
	case sub == "checkout" && has("-f", "--force"),
		sub == "switch" && has("-f", "--force", "--discard-changes"),
		sub == "stash" && (first == "drop" || first == "clear"),
		sub == "worktree" && first == "remove" && has("-f", "--force"),
		sub == "branch" && (slices.Contains(rest, "-D") || has("-d", "--delete") && has("-f", "--force")),
		sub == "reflog" && first == "expire",
		sub == "gc" && slices.ContainsFunc(rest, func(s string) bool { return strings.HasPrefix(s, "--prune=") && s != "--prune=2.weeks.ago" }),
		sub == "rm" && has("-r"):
		a.danger(c, RuleGitDiscard, "discards work in the repository (git "+sub+")")
	case sub == "push" && (has("-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror", "--delete", "-d", "--prune") ||
		slices.ContainsFunc(operands(rest), func(s string) bool { return strings.HasPrefix(s, "+") || strings.HasPrefix(s, ":") })):
		a.danger(c, RuleGitForcePush, "rewrites or deletes remote history (git push --force, --delete or :branch)")
	}
}
