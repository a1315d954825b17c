package tools

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxProtectedFiles bounds the files stat'ed while looking for the
// protected file a hard link shares its inode with.
const maxProtectedFiles = 4096

// linkCount is the number of hard links of an opened file; 1 when unknown.
func linkCount(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// hardLinkedSecret reports whether info, a file just opened for reading,
// is a hard link to a protected file: another name of a credential file or
// of one of $TALARIA_HOME's secrets, which reading by that name would
// bypass. Only a regular file with more than one link is looked at, so the
// ordinary read costs nothing.
func (p Policy) hardLinkedSecret(info fs.FileInfo) bool {
	if !info.Mode().IsRegular() || linkCount(info) < 2 {
		return false
	}
	found := false
	p.eachProtectedFile(func(path string) bool {
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && linkCount(fi) > 1 && os.SameFile(fi, info) {
			found = true
		}
		return !found
	})
	return found
}

// eachProtectedFile calls fn with the existing files the read patterns
// protect (credential files of the worker's home, /root, /home/* and
// /Users/*, the anchored system ones, $TALARIA_HOME's secrets and the
// configured secret files) until fn returns false or maxProtectedFiles
// were seen.
func (p Policy) eachProtectedFile(fn func(string) bool) {
	seen := 0
	visit := func(path string) bool {
		seen++
		return seen <= maxProtectedFiles && fn(path)
	}
	for _, f := range resolvedRoots(p.SecretFiles) {
		if !visit(f) {
			return
		}
	}
	if home := p.talariaHome(); home != "" && !globPatterns(home, homeSecretPatterns, visit) {
		return
	}
	var homes []string
	if h, err := os.UserHomeDir(); err == nil {
		homes = append(homes, resolvedRoots([]string{h})...)
	}
	homes = append(homes, "/root")
	for _, g := range []string{"/home/*", "/Users/*"} {
		m, _ := filepath.Glob(g)
		homes = append(homes, m...)
	}
	var relative, anchored []string
	for _, pat := range credentialPatterns {
		switch {
		case strings.HasPrefix(pat, "/proc/"):
			// No hard link reaches procfs.
		case strings.HasPrefix(pat, "/"):
			anchored = append(anchored, pat)
		default:
			relative = append(relative, pat)
		}
	}
	if !globPatterns("/", anchored, visit) {
		return
	}
	credential := func(path string) bool {
		return strings.HasSuffix(path, ".pub") || visit(path) // public keys are not secret
	}
	for _, h := range homes {
		if !globPatterns(h, relative, credential) {
			return
		}
	}
}

// globPatterns visits the files under base matching patterns (relative to
// base; a final "**" is every file below) until visit returns false, which
// globPatterns then returns.
func globPatterns(base string, patterns []string, visit func(string) bool) bool {
	for _, pat := range patterns {
		prefix, all := strings.CutSuffix(strings.TrimPrefix(pat, "/"), "/**")
		matches, _ := filepath.Glob(filepath.Join(base, prefix))
		for _, m := range matches {
			if !all {
				if !visit(m) {
					return false
				}
				continue
			}
			stop := false
			_ = filepath.WalkDir(m, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				if !visit(path) {
					stop = true
					return filepath.SkipAll
				}
				return nil
			})
			if stop {
				return false
			}
		}
	}
	return true
}
