package tools

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/talaria-agent/talaria/internal/prompt"
	"github.com/talaria-agent/talaria/internal/sandbox"
)

// commandSandbox is the sandbox of a command started in dir (resolved):
// writable the write roots but nothing below $TALARIA_HOME; hidden
// $TALARIA_HOME, the configured secret files and the user's credentials
// (the files read_file refuses); read-only, inside the writable roots,
// the project's context files, shell start-up files and git's hooks and
// configuration, which run or instruct later outside the sandbox. binds
// are directories of the tool's own that stay writable.
func (e Env) commandSandbox(dir string, binds ...string) *sandbox.Command {
	home := e.Policy.talariaHome()
	roots, _, err := e.writeRoots()
	if err != nil {
		roots = nil
	}
	var writable []string
	for _, r := range roots {
		if home == "" || !within(r, home) {
			writable = append(writable, r)
		}
	}
	c := &sandbox.Command{Settings: e.Policy.Sandbox, Dir: dir, Writable: writable, Binds: binds}
	if home != "" {
		c.Hidden = append(c.Hidden, home)
	}
	c.Hidden = append(c.Hidden, resolvedRoots(e.Policy.SecretFiles)...)
	c.Hidden = append(c.Hidden, credentialPaths()...)
	c.ReadOnly = promptFiles(dir, writable)
	return c
}

// credentialPaths are the credential files and directories of
// credentialPatterns that exist: a pattern ending in "/**" names its
// directory, any other the files it matches, below each user's home
// directory for the relative ones.
func credentialPaths() []string {
	var out []string
	for _, pat := range credentialPatterns {
		if strings.HasPrefix(pat, "/proc/") {
			continue // the sandbox has its own /proc
		}
		for _, base := range patternBases(pat) {
			full := filepath.Join(base, pat)
			if dir, ok := strings.CutSuffix(full, "/**"); ok {
				out = append(out, dir)
				continue
			}
			matches, _ := filepath.Glob(full)
			out = append(out, matches...)
		}
	}
	return out
}

// patternBases are where a credential pattern applies: the root for an
// anchored one, every user's home directory for a relative one.
func patternBases(pat string) []string {
	if strings.HasPrefix(pat, "/") {
		return []string{"/"}
	}
	homes := []string{"/root"}
	if h, err := os.UserHomeDir(); err == nil && !slices.Contains(homes, h) {
		homes = append(homes, h)
	}
	others, _ := filepath.Glob("/home/*")
	return append(homes, others...)
}

// promptFiles are the files inside the writable roots that must stay as
// they are: the project context files the system prompt reads for dir,
// each writable root's git hooks and configuration, and the start-up files
// of a home directory that is a writable root or inside one.
func promptFiles(dir string, writable []string) []string {
	var out []string
	names := append(slices.Clone(prompt.NearContextFiles), prompt.WorkdirContextFiles...)
	for d := dir; ; d = filepath.Dir(d) {
		for _, n := range names {
			out = append(out, filepath.Join(d, n))
		}
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil || d == filepath.Dir(d) {
			break
		}
	}
	files, dirs := sensitiveHomeNames()
	for _, r := range writable {
		out = append(out, filepath.Join(r, ".git", "hooks"), filepath.Join(r, ".git", "config"))
		for _, h := range patternBases(".") {
			if within(h, r) {
				for _, f := range append(files, dirs...) {
					out = append(out, filepath.Join(h, f))
				}
			}
		}
	}
	return out
}

// sensitiveHomeNames are the start-up and credential files and
// directories of a home directory that commands never write.
func sensitiveHomeNames() (files, dirs []string) {
	for _, p := range writeOnlyPatterns {
		if strings.HasPrefix(p, "/") {
			continue
		}
		if d, ok := strings.CutSuffix(p, "/**"); ok {
			dirs = append(dirs, d)
		} else {
			files = append(files, p)
		}
	}
	return files, dirs
}

// sandboxSigns are what a command prints when the sandbox stopped it: a
// write outside the writable roots, a hidden path, no network.
var sandboxSigns = []string{"read-only file system", "permission denied", "operation not permitted", "no such file or directory",
	"network is unreachable", "could not resolve host", "temporary failure in name resolution", "name or service not known",
	"couldn't connect to server", "connection refused", "cannot open", "not found"}

// sandboxHint is the line a failed command's result carries when its
// output looks like the sandbox stopped it; "" otherwise. Pure.
func sandboxHint(res terminalResult, s sandbox.Settings) string {
	if res.ExitCode == 0 {
		return ""
	}
	out := strings.ToLower(res.Output)
	if !slices.ContainsFunc(sandboxSigns, func(sign string) bool { return strings.Contains(out, sign) }) {
		return ""
	}
	return "This ran in the sandbox (" + s.Describe() + "). If it failed because of that, and only then, call terminal again " +
		`with "outside_sandbox": true and a "reason": a person is asked to let this one command run outside it.`
}
