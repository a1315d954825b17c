package tools

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// A repository's git directory holds, besides its configuration and
// hooks, files that git reads as instructions: commondir names another
// directory to take the configuration and hooks from, and a command that
// could write one there would have the owner's next git (an editor runs
// one every few seconds) run whatever that configuration says, outside
// the sandbox. Git itself writes the directory's top at every commit
// (index.lock, then index), so the top cannot simply be read-only.
//
// A command therefore sees the top of each repository's git directory as
// a staging directory of its own: git's data files are there (hard links
// of the repository's, so nothing is copied), and so is logs (the reflogs,
// which git appends to through any symbolic link it finds); objects, refs
// and info are the repository's own, writable; everything else at the top
// (config, hooks, packed-refs, modules, worktrees, ...) is the
// repository's, read-only. Once the command has ended, only the data files
// and reflogs that it replaced, made or removed come back, each a regular
// file of its own; anything else it wrote at the top (a commondir, a
// config.worktree, a symbolic link) stays in the staging directory, which
// is then removed, and whatever is not a file or a directory in refs and
// info (a symbolic link through which the owner's git would write
// elsewhere) is removed. Deny by default: what comes back is git's data,
// not a list of what is dangerous.

// gitData are the files at a git directory's top that come back from a
// command: the index, where HEAD points, and the state of a commit,
// merge, cherry-pick or revert under way (and a split index's shared
// parts, sharedIndexPrefix).
var gitData = []string{"index", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "COMMIT_EDITMSG",
	"MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE", "CHERRY_PICK_HEAD", "REVERT_HEAD"}

// sharedIndexPrefix names the shared parts of a split index.
const sharedIndexPrefix = "sharedindex."

// gitLogs is the directory of reflogs, staged whole.
const gitLogs = "logs"

// gitShared are the directories at a git directory's top that a command
// writes in place: objects, refs and info (exclude); gitChecked, those in
// which only files and directories are kept (the reflogs too, against
// links left there before they were staged).
var (
	gitShared  = []string{"objects", "refs", "info"}
	gitChecked = []string{"refs", "info", gitLogs}
)

// stageDirName is the directory, in a git directory, that holds the
// staging directories of the commands running in it (git ignores it).
const stageDirName = "talaria-stage"

// gitStage is one command's staging directory for the top of git.
type gitStage struct {
	git, dir string
	lock     *os.File
	// orig are the staged files when the command started, by their path
	// relative to git.
	orig map[string]os.FileInfo
}

// isGitData says whether rel (relative to a git directory) is a file
// that comes back from a command. Pure.
func isGitData(rel string) bool {
	return slices.Contains(gitData, rel) || strings.HasPrefix(rel, sharedIndexPrefix) && !strings.Contains(rel, "/") ||
		strings.HasPrefix(rel, gitLogs+"/")
}

// stageGit makes a staging directory for the top of the git directory
// git: its data files and reflogs linked into it, its own lock held until
// finish. Staging directories left by a process that died are removed
// first.
func stageGit(git string) (*gitStage, error) {
	base := filepath.Join(git, stageDirName)
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("stage %s: %w", git, err)
	}
	// One staging is made at a time in a repository, so that none is
	// taken for stale while it is being made.
	held, err := os.Open(base)
	if err != nil {
		return nil, fmt.Errorf("stage %s: %w", git, err)
	}
	defer held.Close()
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("stage %s: lock: %w", git, err)
	}
	clearStale(base)
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := hex.EncodeToString(b[:])
	lock, err := os.OpenFile(filepath.Join(base, name+".lock"), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("stage %s: %w", git, err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("stage %s: lock: %w", git, err)
	}
	s := &gitStage{git: git, dir: filepath.Join(base, name), lock: lock, orig: map[string]os.FileInfo{}}
	if err := os.Mkdir(s.dir, 0o700); err != nil {
		s.release()
		return nil, fmt.Errorf("stage %s: %w", git, err)
	}
	if err := s.link(); err != nil {
		_ = os.RemoveAll(s.dir)
		s.release()
		return nil, fmt.Errorf("stage %s: %w", git, err)
	}
	return s, nil
}

// link links the data files at the top and the reflogs into the staging
// directory, the reflogs' directories made anew.
func (s *gitStage) link() error {
	entries, _ := os.ReadDir(s.git)
	for _, e := range entries {
		if n := e.Name(); isGitData(n) && e.Type().IsRegular() {
			if err := s.linkOne(n); err != nil {
				return err
			}
		}
	}
	root := filepath.Join(s.git, gitLogs)
	if info, err := os.Lstat(root); err != nil || !info.IsDir() {
		return nil
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(s.git, p)
		switch {
		case d.IsDir():
			return os.MkdirAll(filepath.Join(s.dir, rel), 0o755)
		case d.Type().IsRegular():
			return s.linkOne(rel)
		}
		return nil // a symbolic link or other: left out
	})
}

// linkOne links git's file rel into the staging directory.
func (s *gitStage) linkOne(rel string) error {
	info, err := os.Lstat(filepath.Join(s.git, rel))
	if err != nil {
		return err
	}
	if err := os.Link(filepath.Join(s.git, rel), filepath.Join(s.dir, rel)); err != nil {
		return err
	}
	s.orig[rel] = info
	return nil
}

// top sorts the entries at the git directory's top for the sandbox:
// shared, the directories written in place; kept, everything else but the
// staged files and directories, read-only.
func (s *gitStage) top() (shared, kept []string) {
	entries, _ := os.ReadDir(s.git)
	for _, e := range entries {
		n := e.Name()
		p := filepath.Join(s.git, n)
		switch {
		case n == stageDirName, isGitData(n) && e.Type().IsRegular(), n == gitLogs && e.IsDir():
		case slices.Contains(gitShared, n) && e.IsDir():
			shared = append(shared, p)
		default:
			kept = append(kept, p)
		}
	}
	return shared, kept
}

// finish brings back the data files and reflogs the command replaced,
// made or removed (a regular file of one link only: a command's own),
// removes what is neither a file nor a directory from refs and info,
// removes the staging directory and lets go of its lock. A file the
// command removed is removed from the repository only if nothing else
// replaced it there meanwhile; one it replaced replaces the repository's
// under git's own lock for it (the last writer wins, as between two gits).
// It returns what did not come back, and why.
func (s *gitStage) finish() []string {
	// Links first: nothing is brought back through one (a logs directory
	// that an older version let a command make a link).
	var failed []string
	for _, dir := range gitChecked {
		failed = append(failed, keepFilesOnly(s.git, dir)...)
	}
	seen := map[string]bool{}
	var found []string
	_ = filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == s.dir {
			return nil
		}
		rel, _ := filepath.Rel(s.dir, p)
		if d.IsDir() {
			if rel != gitLogs && !strings.HasPrefix(rel, gitLogs+"/") {
				return filepath.SkipDir
			}
			return nil
		}
		if isGitData(rel) {
			found = append(found, rel)
		}
		return nil
	})
	for _, rel := range found {
		seen[rel] = true
		if why := s.bringBack(rel); why != "" {
			failed = append(failed, rel+": "+why)
		}
	}
	for rel, orig := range s.orig {
		if seen[rel] {
			continue
		}
		// Removed by the command.
		target := filepath.Join(s.git, rel)
		if cur, err := os.Lstat(target); err == nil && os.SameFile(cur, orig) {
			if err := os.Remove(target); err != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", rel, err))
			}
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		failed = append(failed, fmt.Sprintf("remove the staging directory: %v", err))
	}
	s.release()
	slices.Sort(failed)
	return failed
}

// bringBack puts the staged file rel in its place in the repository when
// the command replaced or made it; it says why not, or "".
func (s *gitStage) bringBack(rel string) string {
	staged := filepath.Join(s.dir, rel)
	info, err := os.Lstat(staged)
	if err != nil {
		return err.Error()
	}
	if orig, had := s.orig[rel]; had && os.SameFile(info, orig) {
		return "" // untouched, or written in place (the same file)
	}
	if !info.Mode().IsRegular() || links(info) != 1 {
		return "not a file of its own"
	}
	target := filepath.Join(s.git, rel)
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err.Error()
	}
	// Git's lock for the file: a git of the owner's writing it now
	// finishes first.
	var lock *os.File
	for range 20 {
		if lock, err = os.OpenFile(target+".lock", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil || !errors.Is(err, os.ErrExist) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		return "locked by another git: " + err.Error()
	}
	defer func() { lock.Close(); _ = os.Remove(target + ".lock") }()
	if err := os.Rename(staged, target); err != nil {
		return err.Error()
	}
	return ""
}

// keepFilesOnly removes what is neither a regular file nor a directory
// below git's dir (a symbolic link, a pipe): the owner's git would write
// through it. It says what it removed.
func keepFilesOnly(git, dir string) []string {
	var removed []string
	root := filepath.Join(git, dir)
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(git, p)
		if os.Remove(p) == nil {
			removed = append(removed, rel+": not a file (removed)")
		}
		return nil
	})
	return removed
}

// release lets go of the staging directory's lock and removes it.
func (s *gitStage) release() {
	_ = os.Remove(s.lock.Name())
	s.lock.Close()
}

// clearStale removes the staging directories in base whose command's
// process is gone: their lock is free, or missing.
func clearStale(base string) {
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		name, isLock := strings.CutSuffix(e.Name(), ".lock")
		if isLock {
			if !lockFree(filepath.Join(base, e.Name())) {
				continue
			}
			_ = os.RemoveAll(filepath.Join(base, name))
			_ = os.Remove(filepath.Join(base, e.Name()))
			continue
		}
		if _, err := os.Lstat(filepath.Join(base, name+".lock")); errors.Is(err, os.ErrNotExist) {
			_ = os.RemoveAll(filepath.Join(base, name))
		}
	}
}

// lockFree says whether no process holds the lock file p.
func lockFree(p string) bool {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

// links is how many names info's file has.
func links(info os.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}
