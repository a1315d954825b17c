package tools

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"unicode/utf8"
)

// MaxSpillBytes bounds the file that keeps a long output in full: a
// command printing gigabytes keeps its first MaxSpillBytes on disk.
const MaxSpillBytes = 256 << 20

// DefaultOutputQuota bounds all kept outputs of a home together when
// Policy.OutputQuota is zero (tools.output_quota).
const DefaultOutputQuota = 1 << 30

// OutputsDirName is the directory of $TALARIA_HOME holding kept outputs,
// one subdirectory per session.
const OutputsDirName = "outputs"

// maxSessionDirLen is the longest session id used as a directory name
// as it is; sessions ids are at most 128 characters.
const maxSessionDirLen = 128

// SessionDirName is the name of a session's directory of kept outputs:
// the id itself when it is a safe path component (letters, digits, '.',
// '_', '~' and '-', not starting with '.'), else '@' and a digest of it,
// which no safe id can equal. An empty id has none. Pure.
func SessionDirName(sessionID string) (string, error) {
	if sessionID == "" {
		return "", errors.New("no session id")
	}
	if safeComponent(sessionID) {
		return sessionID, nil
	}
	sum := sha256.Sum256([]byte(sessionID))
	return "@" + hex.EncodeToString(sum[:16]), nil
}

// safeComponent reports whether s may name a directory as it is.
func safeComponent(s string) bool {
	if len(s) == 0 || len(s) > maxSessionDirLen || s[0] == '.' {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '.', c == '_', c == '~', c == '-':
		default:
			return false
		}
	}
	return true
}

// spillTarget is where a long output of one call may be kept: the outputs
// directory, the session, and the quota of the whole directory.
type spillTarget struct {
	base    string
	session string
	quota   int64
}

// spillTarget is where this call's long outputs go; none without an
// output directory or a session.
func (e Env) spillTarget() spillTarget {
	if e.OutputDir == "" || e.outputsKey() == "" {
		return spillTarget{}
	}
	q := e.Policy.OutputQuota
	if q <= 0 {
		q = DefaultOutputQuota
	}
	return spillTarget{base: e.OutputDir, session: e.outputsKey(), quota: q}
}

// spillWriter keeps the whole output of a command once it passes the cap
// the model sees: the first limit bytes wait in memory; when more arrive,
// they and everything after go to a new file in the session's directory
// (up to MaxSpillBytes, within the outputs quota). An output within the
// cap never touches the disk. Write never fails: a file that cannot be
// written is reported by note, and the model still gets the head and
// tail.
type spillWriter struct {
	to      spillTarget
	limit   int
	max     int64 // most bytes kept in the file
	pending []byte
	f       *os.File
	rel     string // the file, relative to to.base
	granted int64  // bytes the quota allows this file
	full    bool   // the quota gave no more room
	written int64
	total   int64
	err     error
}

func newSpillWriter(to spillTarget, limit int) *spillWriter {
	return &spillWriter{to: to, limit: limit, max: min(MaxSpillBytes, max(to.quota, 0))}
}

func (w *spillWriter) Write(p []byte) (int, error) {
	w.total += int64(len(p))
	if w.to.base == "" || w.err != nil {
		return len(p), nil
	}
	if w.f == nil {
		if len(w.pending)+len(p) <= w.limit {
			w.pending = append(w.pending, p...)
			return len(p), nil
		}
		if err := w.open(); err != nil {
			w.err = err
			return len(p), nil
		}
	}
	w.keep(p)
	return len(p), nil
}

// spillChunk is how much quota a writer asks for at a time.
const spillChunk = 4 << 20

// keep writes p to the file, as far as MaxSpillBytes and the quota allow.
func (w *spillWriter) keep(p []byte) {
	if room := w.max - w.written; int64(len(p)) > room {
		p = p[:max(room, 0)]
	}
	if len(p) == 0 {
		return
	}
	if have := w.granted - w.written; int64(len(p)) > have && !w.full {
		need := int64(len(p)) - have
		want := min(max(need, spillChunk), w.max-w.granted)
		got := quotas.reserve(w.to.base, w.rel, min(need, want), want, w.to.quota)
		w.granted += got
		w.full = got < min(need, want)
	}
	if have := w.granted - w.written; int64(len(p)) > have {
		p = p[:max(have, 0)]
	}
	if len(p) == 0 {
		return
	}
	n, err := w.f.Write(p)
	w.written += int64(n)
	if err != nil {
		w.err = fmt.Errorf("write %s: %w", w.f.Name(), err)
	}
}

// open creates the spill file and writes what waited in memory.
func (w *spillWriter) open() error {
	f, rel, err := quotas.create(w.to.base, w.to.session)
	if err != nil {
		return err
	}
	w.f, w.rel = f, rel
	pending := w.pending
	w.pending = nil
	w.keep(pending)
	return w.err
}

// close finishes the file and returns the note the model reads after the
// omission marker: where the full output is, or why it is not kept. With
// cut, an output that stayed in memory (the model's copy was cut for
// another reason than its length in bytes) is kept now.
func (w *spillWriter) close(cut bool) string {
	if cut && w.f == nil && w.err == nil && len(w.pending) > 0 && w.to.base != "" {
		if err := w.open(); err != nil {
			w.err = err
		}
	}
	if w.f != nil {
		if err := w.f.Close(); err != nil && w.err == nil {
			w.err = fmt.Errorf("close %s: %w", w.f.Name(), err)
		}
		quotas.release(w.to.base, w.rel)
		if w.written == 0 && w.err == nil {
			_ = removeUnder(w.to.base, w.rel)
			w.err = fmt.Errorf("the outputs quota (%d bytes, tools.output_quota) is full", w.to.quota)
		}
	}
	switch {
	case w.f == nil && w.err == nil:
		return ""
	case w.err != nil:
		return fmt.Sprintf("[the full output (%d bytes) could not be kept: %v]", w.total, w.err)
	case w.written < w.total && w.full:
		return fmt.Sprintf("[the first %d of %d bytes of the full output are in %s (the outputs quota allowed no more); read them with read_file]", w.written, w.total, w.f.Name())
	case w.written < w.total:
		return fmt.Sprintf("[the first %d of %d bytes of the full output are in %s; read them with read_file]", w.written, w.total, w.f.Name())
	}
	return fmt.Sprintf("[the full output (%d bytes) is in %s; read it with read_file (offset/limit)]", w.total, w.f.Name())
}

// path is the spill file, if one was written.
func (w *spillWriter) path() string {
	if w.f == nil || w.err != nil {
		return ""
	}
	return w.f.Name()
}

// createSpillFile creates a new file (0600) in the session's directory
// (0700) under base (0700), following no symlink on the way: base and the
// session's directory must be real directories, and the file is new.
func createSpillFile(base, session string) (*os.File, string, error) {
	name, err := SessionDirName(session)
	if err != nil {
		return nil, "", fmt.Errorf("keep output: %w", err)
	}
	root, err := openOutputsRoot(base, true)
	if err != nil {
		return nil, "", err
	}
	defer root.Close()
	if err := root.Mkdir(name, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, "", fmt.Errorf("create %s: %w", filepath.Join(base, name), err)
	}
	if fi, err := root.Lstat(name); err != nil {
		return nil, "", fmt.Errorf("keep output: %w", err)
	} else if !fi.IsDir() {
		return nil, "", fmt.Errorf("keep output: %s is %s, not a directory", filepath.Join(base, name), fileKind(fi.Mode()))
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	rel := filepath.Join(name, "output-"+hex.EncodeToString(rnd[:])+".txt")
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("create a file in %s: %w", filepath.Join(base, name), err)
	}
	// The file's name is base/rel: the path read_file resolves.
	return f, rel, nil
}

// openOutputsRoot opens base, which must be a real directory, not a
// symlink; with create, a missing base is made (0700).
func openOutputsRoot(base string, create bool) (*os.Root, error) {
	if create {
		if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create %s: %w", base, err)
		}
	}
	fi, err := os.Lstat(base)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", base, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("open %s: it is %s, not a directory", base, fileKind(fi.Mode()))
	}
	root, err := os.OpenRoot(base)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", base, err)
	}
	if opened, err := root.Stat("."); err != nil || !os.SameFile(opened, fi) {
		root.Close()
		return nil, fmt.Errorf("open %s: it changed while being opened", base)
	}
	return root, nil
}

// removeUnder removes base/rel without leaving base.
func removeUnder(base, rel string) error {
	root, err := openOutputsRoot(base, false)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.Remove(rel)
}

// boundResult is the net under every tool result: a result above twice
// the output cap reaches the model as its head and tail within the cap.
// For a tool that does not bound its own output, the whole is kept in the
// session's directory like a long terminal output; a tool that bounds its
// own (terminal, read_file) has kept what it needed, so nothing is kept
// twice. A JSON result stays valid JSON (its text is cut before it is
// encoded, never the document).
func (e Env) boundResult(content string, selfBounded bool) string {
	limit := e.maxOutput()
	if len(content) <= 2*limit || utf8.RuneCountInString(content) <= 2*limit {
		return content
	}
	note := ""
	if !selfBounded {
		w := newSpillWriter(e.spillTarget(), 0)
		_, _ = w.Write([]byte(content))
		note = w.close(true)
	}
	return cutResult(content, limit, note)
}
