package approval

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// diskDevice matches whole disks and partitions under /dev.
var diskDevice = regexp.MustCompile(`^/dev/(?:(?:s|h|v|xv)d[a-z]|nvme[0-9]|mmcblk[0-9]|r?disk[0-9]|md[0-9]|dm-[0-9]|mapper/|disk/)`)

// systemDirs are directories whose recursive deletion or re-permissioning
// wrecks the machine.
var systemDirs = []string{
	"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
	"/proc", "/sbin", "/sys", "/usr", "/usr/bin", "/usr/lib", "/usr/sbin", "/var", "/var/lib",
}

// homeFiles are the files in a home directory that run at login or hold
// credentials; homeDirs count as a whole.
var homeFiles = []string{
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc",
	".bash_history", ".zsh_history", ".gitconfig", ".netrc", ".git-credentials",
	".npmrc", ".pypirc", ".pgpass", ".my.cnf", ".docker/config.json", ".xinitrc",
	".xprofile", ".inputrc", ".config/fish/config.fish", ".config/git/credentials",
	".bash_aliases", ".pam_environment", ".vimrc", ".exrc", ".gvimrc", ".config/nvim/init.vim",
	".config/nvim/init.lua", ".emacs", ".tmux.conf", ".screenrc", ".wgetrc", ".curlrc",
	".pip/pip.conf", ".config/pip/pip.conf", ".cargo/config.toml", ".cargo/config", ".gdbinit",
	".config/gdb/gdbinit", ".irbrc", ".pryrc", ".psqlrc", ".sqliterc", ".yarnrc", ".yarnrc.yml",
	".bash_completion", ".npm-init.js",
}

// homeDirs are the directories in a home directory whose every file holds
// keys, credentials or login scripts.
var homeDirs = []string{
	".ssh", ".gnupg", ".aws", ".config/gcloud", ".kube", ".azure", ".config/gh",
	".docker", ".password-store", ".config/autostart", ".config/systemd/user", ".terraform.d",
	".local/bin", "bin", ".config/fish", ".config/environment.d", ".config/git",
	".vim/plugin", ".vim/autoload", ".vim/ftplugin", ".config/nvim/plugin", ".config/nvim/lua",
	".local/lib", ".ipython/profile_default/startup",
}

// SensitiveHomePaths lists, relative to a home directory, the files that
// run at login or hold credentials (files) and the directories whose every
// file does (dirs): what a write must not touch. The file tools refuse to
// write them from the same lists. The slices are copies.
func SensitiveHomePaths() (files, dirs []string) {
	return slices.Clone(homeFiles), slices.Clone(homeDirs)
}

// absClean cleans an absolute path; ok is false for relative paths.
func absClean(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") {
		return "", false
	}
	return path.Clean(p), true
}

// globParent strips trailing "/*" and "/.*" components: "/usr/*" → "/usr".
// all reports whether anything was stripped.
func globParent(p string) (parent string, all bool) {
	for {
		switch {
		case p == "/*" || p == "/.*":
			return "/", true
		case strings.HasSuffix(p, "/*"):
			p, all = p[:len(p)-2], true
		case strings.HasSuffix(p, "/.*"):
			p, all = p[:len(p)-3], true
		default:
			return p, all
		}
	}
}

// isRootTarget reports whether p names the root directory or everything in
// it, including a single wildcard component such as "/*" or "/b*".
func isRootTarget(p string) bool {
	c, ok := absClean(p)
	if !ok {
		return false
	}
	if parent, _ := globParent(c); parent == "/" {
		return true
	}
	return strings.Count(c, "/") == 1 && strings.ContainsAny(c, "*?[")
}

// isSystemDir reports whether p is a system directory itself or all of its
// contents ("/usr", "/etc/*").
func isSystemDir(p string) bool {
	c, ok := absClean(p)
	if !ok {
		return false
	}
	c, _ = globParent(c)
	for _, d := range systemDirs {
		if c == d {
			return true
		}
	}
	return false
}

// homeRel splits a path inside a home directory: "~/.ssh/id" and
// "$HOME/.ssh/id" give ".ssh/id"; home itself gives ".". ok is false for a
// path outside any home.
func homeRel(p string) (string, bool) {
	for _, v := range []string{"${HOME}", "$HOME"} {
		if rest, found := strings.CutPrefix(p, v); found && (rest == "" || rest[0] == '/') {
			p = "~" + rest
			break
		}
	}
	if strings.HasPrefix(p, "~") {
		if !isHomePath(p) {
			return "", false // ~+ and ~- are $PWD and $OLDPWD
		}
		_, rest, _ := strings.Cut(p, "/")
		return path.Clean("./" + rest), true
	}
	c, ok := absClean(p)
	if !ok {
		return "", false
	}
	parts := strings.Split(strings.TrimPrefix(c, "/"), "/")
	switch {
	case parts[0] == "root":
		return path.Clean("./" + strings.Join(parts[1:], "/")), true
	case (parts[0] == "home" || parts[0] == "Users") && len(parts) >= 2 && parts[1] != "":
		return path.Clean("./" + strings.Join(parts[2:], "/")), true
	}
	return "", false
}

// isHomeRoot reports whether p names a home directory itself, everything in
// it, or what is above it ("~", "$HOME/*", "~/..", "/home/alice").
func isHomeRoot(p string) bool {
	rel, ok := homeRel(p)
	if !ok {
		return false
	}
	rel, _ = globParent("/" + rel)
	rel = path.Clean(rel)
	return rel == "/" || rel == "/.."
}

// globUnder reports whether a path with glob characters (".bash*",
// ".ss?/x") can name p or something below it.
func globUnder(glob, p string) bool {
	if !strings.ContainsAny(glob, "*?[") {
		return false
	}
	g, n := strings.Split(glob, "/"), strings.Split(p, "/")
	if len(g) < len(n) {
		return false
	}
	for i := range n {
		if ok, _ := path.Match(g[i], n[i]); !ok {
			return false
		}
	}
	return true
}

// cleanArg is a path operand as a pattern shows it: cleaned, and relative
// paths start with "./" so that "build/" and "./build" read the same.
func cleanArg(p string) string {
	if p == "" {
		return p
	}
	c := path.Clean(p)
	switch {
	case strings.HasPrefix(c, "/"), strings.HasPrefix(c, "~"), strings.HasPrefix(c, "$"),
		c == ".", c == "..", strings.HasPrefix(c, "../"):
		return c
	}
	return "./" + c
}

// isDisk reports whether p is a disk or partition device.
func isDisk(p string) bool {
	c, ok := absClean(p)
	return ok && diskDevice.MatchString(c)
}

// isHomePath reports a path that starts with ~ or ~/ (~+ and ~- are
// $PWD and $OLDPWD; ~NAME is NAME's home).
func isHomePath(p string) bool {
	return strings.HasPrefix(p, "~") && !strings.HasPrefix(p, "~+") && !strings.HasPrefix(p, "~-")
}
