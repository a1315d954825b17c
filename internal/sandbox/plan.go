package sandbox

import (
	"cmp"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// kind is what a mount makes of a path inside the sandbox.
type kind int

const (
	writable   kind = iota // the host path, writable
	standIn                // another host directory, writable
	readOnly               // the host path, read-only
	hiddenDir              // an empty directory
	hiddenFile             // an empty file (/dev/null, read-only)
	emptyDir               // an empty read-only directory
)

// mount is one path of the sandbox's view: dst shows src (the host path;
// dst when empty) as kind says.
type mount struct {
	kind     kind
	src, dst string
}

// baseMounts are the start of every sandbox: the host read-only, a new
// /dev and /proc, and an empty private /tmp and /run (the host's sockets:
// a database's, a container engine's, the session bus).
var baseMounts = []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"}

// strength orders mounts of one path: the most restrictive wins.
func (k kind) strength() int {
	switch k {
	case hiddenDir, hiddenFile, emptyDir:
		return 3
	case readOnly:
		return 2
	case standIn:
		return 1
	}
	return 0
}

// orderMounts keeps one mount per destination (the most restrictive) and
// orders them so that a path's mount comes after its parents': a hidden
// directory hides what is below it, and a writable root below a hidden
// directory (the owner's workspace inside $TALARIA_HOME) is shown again.
// Pure.
func orderMounts(ms []mount) []mount {
	best := map[string]mount{}
	for _, m := range ms {
		m.dst = filepath.Clean(m.dst)
		m.src = cmp.Or(m.src, m.dst)
		if old, ok := best[m.dst]; !ok || m.kind.strength() > old.kind.strength() {
			best[m.dst] = m
		}
	}
	out := make([]mount, 0, len(best))
	for _, m := range best {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := depth(out[i].dst), depth(out[j].dst)
		if di != dj {
			return di < dj
		}
		return out[i].dst < out[j].dst
	})
	return out
}

// depth is the number of elements of a clean absolute path ("/" is 0).
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// mountArgs are bwrap's options for ms, in order.
func mountArgs(ms []mount) []string {
	var out []string
	for _, m := range orderMounts(ms) {
		switch m.kind {
		case writable, standIn:
			out = append(out, "--bind", m.src, m.dst)
		case readOnly:
			out = append(out, "--ro-bind", m.src, m.dst)
		case hiddenDir:
			out = append(out, "--tmpfs", m.dst)
		case hiddenFile:
			out = append(out, "--ro-bind", "/dev/null", m.dst)
		case emptyDir:
			out = append(out, "--tmpfs", m.dst, "--remount-ro", m.dst)
		}
	}
	return out
}

// bwrapArgs are the whole bwrap command line for a command whose mounts
// are ms, before the program and its arguments. seccompFD is the
// descriptor the filter is read from (-1: none). Pure.
func bwrapArgs(c Command, ms []mount, seccompFD int) []string {
	args := append([]string{}, baseMounts...)
	args = append(args, mountArgs(ms)...)
	args = append(args, "--unshare-all", "--unshare-user", "--disable-userns")
	if c.Network == NetworkOn {
		args = append(args, "--share-net")
	}
	args = append(args, "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--setenv", "TMPDIR", "/tmp")
	if c.Dir != "" {
		args = append(args, "--chdir", c.Dir)
	}
	if seccompFD >= 0 {
		args = append(args, "--seccomp", strconv.Itoa(seccompFD))
	}
	return append(args, "--")
}
