package tools

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/talaria-agent/talaria/internal/approval"
)

// credentialPatterns are well-known credential files. A pattern starting
// with "/" is anchored at the root; any other is relative to a user's home
// directory (the worker's, /root, /home/* and /Users/*). Segments are filepath.Match patterns; a final
// "**" matches everything below.
var credentialPatterns = []string{
	".ssh/id_*", ".ssh/identity", ".aws/credentials", ".netrc", ".git-credentials",
	".config/git/credentials", ".config/gcloud/**", ".docker/config.json", ".kube/config",
	".pgpass", ".pypirc", ".npmrc", ".my.cnf", ".config/gh/hosts.yml", ".gnupg/**", ".password-store/**",
	".azure/accessTokens.json", ".azure/msal_token_cache.*", ".terraform.d/credentials.tfrc.json",
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d/**",
	"/etc/ssh/ssh_host_*_key", "/etc/ssl/private/**",
	"/proc/*/environ", "/proc/*/task/*/environ", "/proc/*/mem", "/proc/*/task/*/mem",
}

// writeOnlyPatterns are never written though they may be read, wherever
// the working directory is: every start-up and credential file of a home
// directory that approval treats as sensitive (approval.SensitiveHomePaths,
// one list for both), plus session start-up files approval does not name
// and the kernel's trees.
var writeOnlyPatterns = sensitiveWritePatterns(".xsession", ".xsessionrc", ".config/systemd/**", "/proc/**", "/sys/**")

// sensitiveWritePatterns is approval's list as patterns (a directory
// covers everything below it), plus extra.
func sensitiveWritePatterns(extra ...string) []string {
	files, dirs := approval.SensitiveHomePaths()
	out := append(files, extra...)
	for _, d := range dirs {
		out = append(out, d+"/**")
	}
	return out
}

// anywherePatterns are never written, at any depth of any directory: a
// repository's git directory, whose hooks and configuration (and a
// commondir naming other ones) run commands on the next git command, and
// a .git file (a repository whose git directory is elsewhere). Git's own
// data there is written by git, in the sandbox.
var anywherePatterns = []string{".git", ".git/**"}

// homeSecretPatterns are $TALARIA_HOME's secrets, relative to it.
var homeSecretPatterns = []string{
	"config.yaml", "config.yml", "*.db", "*.db-*", "*.sqlite", "*.sqlite-*", "*.pem", "*.key", "*.crt", "*.p12",
	"*credential*", "*secret*", "*token*", "tls/**", "certs/**",
}

// readProtected says why real (a resolved path) is never read by tools.
func (p Policy) readProtected(real string) (string, bool) {
	return p.readGuard().protected(real)
}

// readGuard is the policy's read protection with its roots resolved once,
// for checking many paths (a search walks thousands).
func (p Policy) readGuard() readGuard {
	return readGuard{secretFiles: resolvedRoots(p.SecretFiles), home: p.talariaHome()}
}

// readGuard is readProtected's state: the resolved secret files and
// $TALARIA_HOME.
type readGuard struct {
	secretFiles []string
	home        string
}

// protected is readProtected for one resolved path.
func (g readGuard) protected(real string) (string, bool) {
	if slices.Contains(g.secretFiles, real) {
		return "a secret file named in the configuration", true
	}
	if g.home != "" && within(real, g.home) && real != g.home {
		rel, _ := filepath.Rel(g.home, real)
		if matchAny(splitPath(rel), homeSecretPatterns, []int{0}) {
			return "one of $TALARIA_HOME's secrets (configuration, databases, keys)", true
		}
	}
	if mayBeCredential(real) {
		if segs := splitPath(real); matchAny(segs, credentialPatterns, homeOffsets(segs)) && !strings.HasSuffix(real, ".pub") {
			return "a credential file", true
		}
	}
	return "", false
}

// mayBeCredential is a quick test that real could match a credential
// pattern: each lies below a dot directory or file of a home, or under
// /etc or /proc. Pure.
func mayBeCredential(real string) bool {
	return strings.Contains(real, "/.") || strings.HasPrefix(real, "/etc/") || strings.HasPrefix(real, "/proc/")
}

// writeProtected says why real is never written by tools. writeRoots are
// the configured write roots, resolved: a root inside $TALARIA_HOME opens
// that part of it (its secrets stay closed).
func (p Policy) writeProtected(real string, writeRoots []string) (string, bool) {
	if why, bad := p.readProtected(real); bad {
		return why, true
	}
	if home := p.talariaHome(); home != "" && within(real, home) {
		opened := slices.ContainsFunc(writeRoots, func(r string) bool { return within(r, home) && within(real, r) })
		if !opened {
			return "inside $TALARIA_HOME (configuration, memories, identity)", true
		}
	}
	segs := splitPath(real)
	if matchAny(segs, writeOnlyPatterns, homeOffsets(segs)) {
		return "a shell start-up, credential or system file", true
	}
	// A home's dot entries are its start-up, configuration and credential
	// files, whatever their names: none is written (as in the sandbox,
	// where a home is writable only through its other directories), but
	// in a write root the owner opened inside one.
	for _, off := range homeOffsets(segs) {
		if off >= len(segs) || !strings.HasPrefix(segs[off], ".") {
			continue
		}
		dot := filepath.Join(append([]string{"/"}, segs[1:off+1]...)...)
		if !slices.ContainsFunc(writeRoots, func(r string) bool { return within(r, dot) && within(real, r) }) {
			return "in a home directory's dot files (start-up, configuration and credentials)", true
		}
	}
	if matchAny(segs, anywherePatterns, allOffsets(segs)) {
		return "one of a git repository's own files (git writes those, in the sandbox)", true
	}
	return "", false
}

// splitPath splits a clean path into its segments; an absolute path starts
// with "/".
func splitPath(p string) []string {
	segs := strings.Split(strings.Trim(filepath.ToSlash(p), "/"), "/")
	if filepath.IsAbs(p) {
		return append([]string{"/"}, segs...)
	}
	return segs
}

// homeOffsets are the indexes in segs (of an absolute path) where a home
// directory's content starts: after the worker's home, /root, /home/<user>
// or /Users/<user>.
func homeOffsets(segs []string) []int {
	var out []int
	if home, err := os.UserHomeDir(); err == nil {
		for _, h := range resolvedRoots([]string{home}) {
			if hs := splitPath(h); len(segs) > len(hs) && slices.Equal(segs[:len(hs)], hs) {
				out = append(out, len(hs))
			}
		}
	}
	switch {
	case len(segs) > 2 && segs[1] == "root":
		out = append(out, 2)
	case len(segs) > 3 && (segs[1] == "home" || segs[1] == "Users"):
		out = append(out, 3)
	}
	return out
}

// allOffsets are all the indexes of segs, for patterns matched at any
// depth.
func allOffsets(segs []string) []int {
	out := make([]int, len(segs))
	for i := range out {
		out[i] = i
	}
	return out
}

// matchAny reports whether segs match one of patterns: an anchored ("/")
// pattern from the start, a relative one from any of offsets.
func matchAny(segs, patterns []string, offsets []int) bool {
	for _, pat := range patterns {
		ps := splitPath(pat)
		if ps[0] == "/" {
			if matchSegments(segs, ps) {
				return true
			}
			continue
		}
		for _, i := range offsets {
			if i <= len(segs) && matchSegments(segs[i:], ps) {
				return true
			}
		}
	}
	return false
}

// matchSegments matches path segments against pattern segments exactly; a
// final "**" matches one or more segments.
func matchSegments(segs, pat []string) bool {
	for i, ps := range pat {
		if ps == "**" && i == len(pat)-1 {
			return len(segs) > i
		}
		if i >= len(segs) {
			return false
		}
		if ok, err := filepath.Match(ps, segs[i]); err != nil || !ok {
			return false
		}
	}
	return len(segs) == len(pat)
}
