package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Path errors. The messages built on them are what the model reads.
var (
	// ErrOutsideRoots: a file tool was asked to touch a path outside the
	// roots it may use.
	ErrOutsideRoots = errors.New("outside the allowed roots")
	// ErrProtectedPath: the path is a credential file or one of
	// $TALARIA_HOME's secrets, which tools never touch.
	ErrProtectedPath = errors.New("protected path")
)

// maxLinkHops bounds the symlinks followed while resolving one path.
const maxLinkHops = 40

// realPath resolves every symlink of an absolute, clean path, including a
// dangling one, and the missing tail is kept as written: the result is the
// file the kernel would reach.
func realPath(abs string) (string, error) {
	return realPathHops(abs, 0)
}

func realPathHops(abs string, hops int) (string, error) {
	if hops > maxLinkHops {
		return "", fmt.Errorf("resolve %s: too many levels of symbolic links", abs)
	}
	p, rest := abs, ""
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("resolve %s: %w", abs, err)
		}
		if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// A dangling link: follow it to where a write would land.
			target, rerr := os.Readlink(p)
			if rerr != nil {
				return "", fmt.Errorf("resolve %s: %w", abs, rerr)
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			return realPathHops(filepath.Join(filepath.Clean(target), rest), hops+1)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// within reports whether path is root or lies under it; both are clean.
func within(path, root string) bool {
	if path == root || root == "/" {
		return true
	}
	return strings.HasPrefix(path, root+string(filepath.Separator))
}

// resolvedRoots expands and resolves root directories; a root that cannot
// be resolved is kept as written (it then matches only itself).
func resolvedRoots(roots []string) []string {
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		if r == "" {
			continue
		}
		if r == "~" || strings.HasPrefix(r, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				r = filepath.Join(home, strings.TrimPrefix(r, "~"))
			}
		}
		abs, err := filepath.Abs(r)
		if err != nil {
			continue
		}
		if real, err := realPath(abs); err == nil {
			abs = real
		}
		out = append(out, abs)
	}
	return out
}

// rootOf returns the first root holding path.
func rootOf(path string, roots []string) (string, bool) {
	for _, r := range roots {
		if within(path, r) {
			return r, true
		}
	}
	return "", false
}

// workdirRoot is the working directory, resolved.
func (e Env) workdirRoot() (string, error) {
	wd, err := e.resolvePath(".")
	if err != nil {
		return "", err
	}
	if real, err := realPath(wd); err == nil {
		wd = real
	}
	return wd, nil
}

// writeRoots are the directories file tools may write under and terminal
// commands may run in: the working directory, resolved, then
// tools.write_roots. A working directory that is / itself does not count
// unless / is one of tools.write_roots. wd is the resolved working
// directory.
func (e Env) writeRoots() (roots []string, wd string, err error) {
	wd, err = e.workdirRoot()
	if err != nil {
		return nil, "", err
	}
	extra := resolvedRoots(e.Policy.WriteRoots)
	if wd == "/" {
		return extra, wd, nil
	}
	return append([]string{wd}, extra...), wd, nil
}

// talariaHome is the configured $TALARIA_HOME, resolved.
func (p Policy) talariaHome() string {
	h := p.Home
	if h == "" {
		h = os.Getenv("TALARIA_HOME")
	}
	if h == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		h = filepath.Join(home, ".talaria")
	}
	if roots := resolvedRoots([]string{h}); len(roots) == 1 {
		return roots[0]
	}
	return ""
}

// checkedPath is a path a file tool may use: as the model wrote it resolved
// (Abs), the real file it reaches (Real) and the root holding it (Root).
type checkedPath struct {
	Abs, Real, Root string
	// kept: a kept output of the current session, read whatever the read
	// roots.
	kept bool
}

// writablePath resolves a path argument and checks that tool may write it:
// it must lie under the working directory or a write root, and not be
// protected. The error is the one-line refusal the model reads.
func (e Env) writablePath(tool, p string) (checkedPath, error) {
	abs, real, err := e.resolveReal(p)
	if err != nil {
		return checkedPath{}, fmt.Errorf("%s: %w", tool, err)
	}
	roots, wd, err := e.writeRoots()
	if err != nil {
		return checkedPath{}, fmt.Errorf("%s: %w", tool, err)
	}
	root, ok := rootOf(real, roots)
	if !ok {
		if wd == "/" {
			return checkedPath{}, refuse(ErrOutsideRoots, "%s: %s is outside the writable roots (tools.write_roots; the working directory is / and / is writable only when listed in tools.write_roots); nothing was written",
				tool, describe(abs, real))
		}
		return checkedPath{}, refuse(ErrOutsideRoots, "%s: %s is outside the writable roots (the working directory %s and tools.write_roots); nothing was written",
			tool, describe(abs, real), wd)
	}
	if why, bad := e.Policy.writeProtected(real, resolvedRoots(e.Policy.WriteRoots)); bad {
		return checkedPath{}, refuse(ErrProtectedPath, "%s: %s is %s; nothing was written", tool, describe(abs, real), why)
	}
	return checkedPath{Abs: abs, Real: real, Root: root}, nil
}

// readablePath resolves a path argument and checks that tool may read it:
// under the read roots when any are configured, and never a protected file.
// Under the output directory only the current session's kept outputs may
// be read (whatever the read roots); the rest of it is refused like a path
// outside the roots.
func (e Env) readablePath(tool, p string) (checkedPath, error) {
	abs, real, err := e.resolveReal(p)
	if err != nil {
		return checkedPath{}, fmt.Errorf("%s: %w", tool, err)
	}
	if base, own := e.outputRoots(); base != "" && within(real, base) {
		if own == "" || filepath.Dir(real) != own {
			return checkedPath{}, refuse(ErrOutsideRoots, "%s: %s is in the output directory %s, where a session reads only its own kept outputs", tool, describe(abs, real), base)
		}
		return checkedPath{Abs: abs, Real: real, Root: own, kept: true}, nil
	}
	if len(e.Policy.ReadRoots) > 0 {
		wd, err := e.workdirRoot()
		if err != nil {
			return checkedPath{}, fmt.Errorf("%s: %w", tool, err)
		}
		if _, ok := rootOf(real, append([]string{wd}, resolvedRoots(e.Policy.ReadRoots)...)); !ok {
			return checkedPath{}, refuse(ErrOutsideRoots, "%s: %s is outside the readable roots (the working directory %s and tools.read_roots)",
				tool, describe(abs, real), wd)
		}
	}
	if why, bad := e.Policy.readProtected(real); bad {
		return checkedPath{}, refuse(ErrProtectedPath, "%s: %s is %s and is not read by tools", tool, describe(abs, real), why)
	}
	return checkedPath{Abs: abs, Real: real}, nil
}

// outputRoots are the output directory, resolved, and the current
// conversation's directory of kept outputs in it ("" without a session).
func (e Env) outputRoots() (base, own string) {
	if e.OutputDir == "" {
		return "", ""
	}
	roots := resolvedRoots([]string{e.OutputDir})
	if len(roots) != 1 {
		return "", ""
	}
	base = roots[0]
	if name, err := SessionDirName(e.outputsKey()); err == nil {
		own = filepath.Join(base, name)
	}
	return base, own
}

// openReadable opens a checked path for reading. The last component is not
// followed (a symlink there now was swapped in after the check), and where
// the system tells which file was really opened, that file is checked
// again, so a directory swapped for a symlink in between gains nothing. A
// kept output must be a regular file with no other name: a hard link the
// terminal put there (to config.yaml, say) is refused.
func (e Env) openReadable(tool string, source checkedPath) (*os.File, error) {
	f, err := os.OpenFile(source.Real, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s %s: file not found: %w", tool, source.Abs, err)
		}
		return nil, fmt.Errorf("%s %s: %w", tool, source.Abs, err)
	}
	if opened, ok := openedPath(f); ok && opened != source.Real {
		if _, err := e.readablePath(tool, opened); err != nil {
			f.Close()
			return nil, err
		}
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s %s: %w", tool, source.Abs, err)
	}
	if source.kept && (!info.Mode().IsRegular() || linkCount(info) != 1) {
		f.Close()
		return nil, refuse(ErrOutsideRoots, "%s: %s is not a kept output (a kept output is a regular file with no other name); it is not read", tool, source.Abs)
	}
	if e.Policy.hardLinkedSecret(info) {
		f.Close()
		return nil, refuse(ErrProtectedPath, "%s: %s is a hard link to a credential file or one of $TALARIA_HOME's secrets and is not read by tools", tool, source.Abs)
	}
	return f, nil
}

// resolveReal turns a path argument into its absolute form and the real
// path it reaches.
func (e Env) resolveReal(p string) (abs, real string, err error) {
	abs, err = e.resolvePath(p)
	if err != nil {
		return "", "", err
	}
	real, err = realPath(abs)
	if err != nil {
		return "", "", err
	}
	return abs, real, nil
}

// refusal is an error whose message is written for the model whole, and
// which matches a sentinel with errors.Is.
type refusal struct {
	msg  string
	kind error
}

func (r refusal) Error() string { return r.msg }
func (r refusal) Unwrap() error { return r.kind }

func refuse(kind error, format string, v ...any) error {
	return refusal{msg: fmt.Sprintf(format, v...), kind: kind}
}

// describe names a path for an error, with where a symlink took it.
func describe(abs, real string) string {
	if abs == real {
		return abs
	}
	return fmt.Sprintf("%s (which resolves to %s)", abs, real)
}
