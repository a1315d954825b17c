package tools

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/talaria-agent/talaria/internal/prompt"
	"github.com/talaria-agent/talaria/internal/sandbox"
)

// commandSandbox is the sandbox of a command started in dir (resolved):
// writable the write roots but nothing below $TALARIA_HOME (a home
// directory only through its subdirectories that are not dot ones, so
// that no start-up file can be planted; a root holding homes not at all);
// hidden $TALARIA_HOME, the configured secret files and the user's
// credentials (the files read_file refuses); read-only, inside the
// writable roots, the project's context files and every repository's
// hooks and configuration, which run or instruct later outside the
// sandbox; and each directory between a writable root and such a path
// anchored, so that it cannot be renamed away and the path replaced.
// binds are directories of the tool's own that stay writable.
//
// A repository's git directory in the writable roots is staged (see
// gitstage.go): done, called once the command and everything it started
// have ended, brings back the git data it wrote and says what did not
// come back. Call done also when the sandbox is not used.
func (e Env) commandSandbox(dir string, binds ...string) (c *sandbox.Command, done func() []string) {
	home := e.Policy.talariaHome()
	roots, _, err := e.writeRoots()
	if err != nil {
		roots = nil
	}
	writable := sandboxRoots(roots, home, patternBases("."))
	c = &sandbox.Command{Settings: e.Policy.Sandbox, Dir: dir, Writable: writable, Binds: binds}
	if home != "" {
		c.Hidden = append(c.Hidden, home)
	}
	c.Hidden = append(c.Hidden, resolvedRoots(e.Policy.SecretFiles)...)
	c.Hidden = append(c.Hidden, credentialPaths()...)
	c.ReadOnly = contextFiles(dir)
	settings, _ := e.Policy.Sandbox.Normalized()
	var stages []*gitStage
	var staged []string
	for _, g := range gitDirs(dir, writable) {
		if slices.ContainsFunc(staged, func(s string) bool { return within(g, s) }) {
			continue // a submodule's or a worktree's, read-only in its staged repository
		}
		c.Sealed = append(c.Sealed, filepath.Join(g, "hooks"))
		if settings.Mode != sandbox.ModeWorkspaceWrite || !slices.ContainsFunc(writable, func(r string) bool { return within(g, r) }) {
			c.ReadOnly = append(c.ReadOnly, filepath.Join(g, "config"))
			c.Anchors = append(c.Anchors, g)
			continue
		}
		s, err := stageGit(g)
		if err != nil {
			c.ReadOnly = append(c.ReadOnly, g) // cannot be staged: read-only
			continue
		}
		stages, staged = append(stages, s), append(staged, g)
		shared, kept := s.top()
		c.Stand = append(c.Stand, sandbox.StandIn{Src: s.dir, Dst: g})
		c.Writable = append(c.Writable, shared...)
		c.ReadOnly = append(c.ReadOnly, kept...)
	}
	c.Anchors = append(c.Anchors, anchors(writable, c.ReadOnly, c.Hidden, c.Sealed)...)
	var once sync.Once
	var failed []string
	return c, func() []string {
		once.Do(func() {
			for _, s := range stages {
				failed = append(failed, s.finish()...)
			}
		})
		return failed
	}
}

// sandboxRoots are the writable roots of a sandbox: roots below home are
// left out, a root that is a user's home directory is replaced by its
// subdirectories that are not dot ones, and a root that holds homes is
// left out. Pure but for reading the home directories.
func sandboxRoots(roots []string, home string, homes []string) []string {
	var out []string
	for _, r := range roots {
		switch {
		case home != "" && within(r, home):
		case slices.Contains(homes, r):
			entries, _ := os.ReadDir(r)
			for _, e := range entries {
				if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
					out = append(out, filepath.Join(r, e.Name()))
				}
			}
		case slices.ContainsFunc(homes, func(h string) bool { return within(h, r) }):
		default:
			out = append(out, r)
		}
	}
	return out
}

// anchors are the directories strictly between a writable root and a
// protected path below it that exists.
func anchors(roots []string, protected ...[]string) []string {
	var out []string
	for _, list := range protected {
		for _, p := range list {
			if _, err := os.Lstat(p); err != nil {
				continue
			}
			for _, r := range roots {
				if p == r || !within(p, r) {
					continue
				}
				for d := filepath.Dir(p); d != r && within(d, r); d = filepath.Dir(d) {
					if !slices.Contains(out, d) {
						out = append(out, d)
					}
				}
			}
		}
	}
	return out
}

// maxGitWalk bounds the directories looked at for repositories below
// each writable root, and gitDepth how deep.
const (
	maxGitWalk = 4000
	gitDepth   = 3
)

// gitDirs are the repositories' git directories the sandbox keeps the
// hooks and configuration of: dir's own repository, those of the writable
// roots and below them (a few levels deep), with their submodules' and
// worktrees'.
func gitDirs(dir string, roots []string) []string {
	var out []string
	add := func(g string) {
		if info, err := os.Lstat(g); err == nil && info.IsDir() && !slices.Contains(out, g) {
			out = append(out, g)
			for _, sub := range []string{"modules", "worktrees"} {
				more, _ := filepath.Glob(filepath.Join(g, sub, "*"))
				for _, m := range more {
					if info, err := os.Lstat(m); err == nil && info.IsDir() && !slices.Contains(out, m) {
						out = append(out, m)
					}
				}
			}
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			add(filepath.Join(d, ".git"))
			break
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	for _, r := range roots {
		seen := 0
		_ = filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if seen++; seen > maxGitWalk {
				return filepath.SkipAll
			}
			if d.Name() == ".git" {
				add(p)
				return filepath.SkipDir
			}
			if p != r && (strings.Count(strings.TrimPrefix(p, r), "/") > gitDepth || skipWalk[d.Name()]) {
				return filepath.SkipDir
			}
			return nil
		})
	}
	return out
}

// skipWalk are directories that hold other people's trees, not the
// owner's repositories.
var skipWalk = map[string]bool{"node_modules": true, ".venv": true, "venv": true, "vendor": true, "target": true, ".cache": true}

// contextFiles are the project context files the system prompt reads for
// dir: from dir up to its git root (the whole way when there is none).
func contextFiles(dir string) []string {
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
	return out
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
