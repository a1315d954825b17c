package approval

import (
	"path"
	"slices"
	"strings"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Reading a secret through the terminal puts it in the conversation, or
// sends it away (curl -d @~/.talaria/config.yaml): naming one of these
// files is Dangerous.

// talariaSecrets are the files of $TALARIA_HOME that hold keys, the
// store or the address of the running engine.
var talariaSecrets = []string{"config.yaml", "talaria.db*", "temporal", "temporal.db*", "tls", "serve.json", "*.pem", "*.key"}

// homeSecrets are the credential files of a home directory.
var homeSecrets = []string{".ssh/id_*", ".ssh/*_key", ".aws/credentials", ".aws/config", ".netrc", ".git-credentials",
	".docker/config.json", ".kube/config", ".config/gh/hosts.yml", ".pgpass", ".my.cnf", ".pypirc", ".npmrc",
	".gnupg/private-keys-v1.d", ".gnupg/secring.gpg", ".config/gcloud/credentials.db",
	".config/gcloud/application_default_credentials.json", ".azure/accessTokens.json", ".password-store",
	".config/git/credentials", ".terraform.d/credentials.tfrc.json"}

// secretDirs are directories that hold secrets; naming one is reading
// them, for a program that reads a tree (tar, cp -r, grep -r, zip ...).
var secretDirs = []string{".ssh", ".aws", ".gnupg", ".kube", ".docker", ".password-store", ".config/gh",
	".config/gcloud", ".azure", ".talaria"}

// isSecretDir reports a secret directory itself or all of it (".ssh",
// ".ssh/*", ".ss?").
func isSecretDir(rel string) bool {
	d, _ := globParent("/" + rel)
	d = strings.TrimPrefix(path.Clean(d), "/")
	for _, s := range secretDirs {
		if d == s || strings.Count(d, "/") == strings.Count(s, "/") && globUnder(d, s) {
			return true
		}
	}
	return false
}

// systemSecrets are the secret files of the system.
var systemSecrets = []string{"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/ssh/ssh_host_*_key",
	"/proc/*/environ", "/proc/*/task/*/environ", "/proc/*/mem", "/proc/*/task/*/mem"}

// isSecretFile reports a path that names a secret file, or a glob that
// may match one.
func isSecretFile(p string) bool {
	if strings.HasSuffix(p, ".pub") {
		return false
	}
	if rel, ok := talariaRel(p); ok {
		if d, _ := globParent("/" + rel); path.Clean(d) == "/" {
			return true // all of it
		}
		return matchesAny(rel, talariaSecrets)
	}
	if rel, ok := homeRel(p); ok {
		return isSecretDir(rel) || matchesAny(rel, homeSecrets)
	}
	if c, ok := absClean(p); ok {
		return matchesAny(c, systemSecrets)
	}
	return false
}

// talariaRel is p relative to $TALARIA_HOME (by default ~/.talaria).
func talariaRel(p string) (string, bool) {
	for _, v := range []string{"${TALARIA_HOME}", "$TALARIA_HOME"} {
		if rest, ok := strings.CutPrefix(p, v); ok && (rest == "" || rest[0] == '/') {
			return path.Clean("./" + rest), true
		}
	}
	rel, ok := homeRel(p)
	if !ok {
		return "", false
	}
	if rel == ".talaria" {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(rel, ".talaria/"); ok {
		return rest, true
	}
	first, rest, _ := strings.Cut(rel, "/")
	if m, _ := path.Match(first, ".talaria"); m || strings.HasPrefix(rel, ".tal") && strings.ContainsAny(rel, "*?[") {
		return path.Clean("./" + rest), true
	}
	return "", false
}

// matchesAny reports whether rel is one of the patterns, lies below one,
// or is a glob that may match one.
func matchesAny(rel string, patterns []string) bool {
	parts := strings.Split(rel, "/")
	for _, pat := range patterns {
		for n := 1; n <= len(parts); n++ {
			if ok, _ := path.Match(pat, strings.Join(parts[:n], "/")); ok {
				return true
			}
		}
		if globUnder(rel, strings.ReplaceAll(pat, "*", "x")) || globMeets(rel, pat) {
			return true
		}
	}
	return false
}

// globMeets reports whether a glob (".s?h/id_rsa", "talaria.d?") and a
// pattern (".ssh/id_*", "talaria.db*") may match the same path, or the
// glob a path below it, comparing them element by element.
func globMeets(glob, pat string) bool {
	if !strings.ContainsAny(glob, "*?[") {
		return false
	}
	g, q := strings.Split(glob, "/"), strings.Split(pat, "/")
	if len(g) < len(q) {
		return false
	}
	for i := range q {
		if !elemsMeet(g[i], q[i]) {
			return false
		}
	}
	return true
}

// elemsMeet reports whether two path elements, either of them a glob, may
// name the same file.
func elemsMeet(g, q string) bool {
	if len(g) > 512 {
		return true // too long to compare: it may
	}
	a, b := globTokens(g), globTokens(q)
	seen := map[[2]int]bool{}
	var meet func(i, j int) bool
	meet = func(i, j int) bool {
		k := [2]int{i, j}
		if seen[k] {
			return false
		}
		seen[k] = true
		switch {
		case i == len(a) && j == len(b):
			return true
		case i < len(a) && a[i] == "*":
			return meet(i+1, j) || j < len(b) && meet(i, j+1)
		case j < len(b) && b[j] == "*":
			return meet(i, j+1) || i < len(a) && meet(i+1, j)
		case i == len(a) || j == len(b):
			return false
		}
		if len(a[i]) == 1 && a[i] != "?" {
			return tokenMatches(b[j], a[i][0]) && meet(i+1, j+1)
		}
		if len(b[j]) == 1 && b[j] != "?" {
			return tokenMatches(a[i], b[j][0]) && meet(i+1, j+1)
		}
		for c := 1; c < 256; c++ {
			if c != '/' && tokenMatches(a[i], byte(c)) && tokenMatches(b[j], byte(c)) {
				return meet(i+1, j+1)
			}
		}
		return false
	}
	return meet(0, 0)
}

// globTokens splits a glob element into "*", "?", "[...]" and single
// characters (a backslash escapes the next one).
func globTokens(g string) []string {
	var out []string
	for i := 0; i < len(g); i++ {
		switch g[i] {
		case '[':
			if end := strings.IndexByte(g[i+1:], ']'); end >= 0 {
				if end == 0 { // []...] holds a ]
					if e2 := strings.IndexByte(g[i+2:], ']'); e2 >= 0 {
						end = e2 + 1
					}
				}
				out = append(out, g[i:i+end+2])
				i += end + 1
				continue
			}
			out = append(out, "\\[")
		case '\\':
			if i+1 < len(g) {
				out = append(out, g[i:i+2])
				i++
				continue
			}
			out = append(out, "\\\\")
		default:
			out = append(out, g[i:i+1])
		}
	}
	return out
}

// tokenMatches reports whether one token of globTokens matches c.
func tokenMatches(t string, c byte) bool {
	ok, err := path.Match(t, string([]byte{c}))
	return ok || err != nil
}

// noReaders are programs that look at a path without reading the file.
var noReaders = map[string]bool{"ls": true, "stat": true, "test": true, "[": true, "chmod": true, "chown": true,
	"chgrp": true, "touch": true, "du": true, "realpath": true, "readlink": true, "dirname": true,
	"basename": true, "mkdir": true, "cd": true, "pushd": true, "echo": true, "printf": true, "rm": true,
	"shred": true, "unlink": true, "ssh-keygen": true, "find": true, "tree": true,
	"git": true, "popd": true, "ssh-add": true}

// secretArgs reports arguments that name a secret file, alone or as the
// value of an option (--key=FILE, -d @FILE, -F f=@FILE).
func (a *assessor) secretArgs(c *cmd) {
	if noReaders[c.name] && !(c.name == "git" && gitReadsFiles(c.args)) {
		return
	}
	for _, arg := range c.args {
		for _, p := range secretCandidates(arg) {
			// find -exec gets a file below its start: below a secret
			// directory, it may be a secret.
			p = strings.TrimSuffix(p, "/_match_")
			if isSecretFile(a.resolve(p)) {
				a.report(turnapi.RiskDangerous, RuleSecretRead, "reads a secret file ("+c.name+" "+short(p)+")", c.pattern())
				return
			}
		}
	}
}

// secretCandidates are the paths an argument may name.
func secretCandidates(arg string) []string {
	out := []string{arg}
	if i := strings.LastIndexByte(arg, '@'); i >= 0 {
		out = append(out, arg[i+1:])
	}
	if i := strings.IndexByte(arg, '='); i >= 0 {
		out = append(out, strings.TrimPrefix(strings.TrimPrefix(arg[i+1:], "@"), "<"))
	}
	if strings.HasPrefix(arg, "-") && len(arg) > 2 && arg[1] != '-' {
		out = append(out, arg[2:]) // -iKEY
	}
	return out
}

// gitReadsFiles reports git commands that print or send the files they
// name: diff --no-index and send-email.
func gitReadsFiles(args []string) bool {
	return slices.Contains(args, "--no-index") || slices.Contains(args, "send-email")
}
