package tools

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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
// of the repository's, so nothing is copied), objects, refs, logs and info
// are the repository's own, writable, and everything else at the top
// (config, hooks, packed-refs, modules, worktrees, ...) is the
// repository's, read-only. Once the command has ended, only the data files
// of gitData that it replaced, made or removed come back; anything else it
// wrote at the top (a commondir, a config.worktree) stays in the staging
// directory, which is then removed. Deny by default: what comes back is a
// list of git's data, not of what is dangerous.

// gitData are the files at a git directory's top that come back from a
// command: the index, where HEAD points, and the state of a commit,
// merge, cherry-pick or revert under way.
var gitData = []string{"index", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "COMMIT_EDITMSG",
	"MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE", "CHERRY_PICK_HEAD", "REVERT_HEAD"}

// gitShared are the directories at a git directory's top that a command
// writes in place: objects, refs, their logs, and info (exclude).
var gitShared = []string{"objects", "refs", "logs", "info"}

// stageDirName is the directory, in a git directory, that holds the
// staging directories of the commands running in it (git ignores it).
const stageDirName = "talaria-stage"

// gitStage is one command's staging directory for the top of git.
type gitStage struct {
	git, dir string
	lock     *os.File
	// orig are the gitData files at the top when the command started.
	orig map[string]os.FileInfo
}

// stageGit makes a staging directory for the top of the git directory
// git: gitData's files linked into it, its own lock held until finish.
// Staging directories left by a process that died are removed first.
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
	for _, n := range gitData {
		info, err := os.Lstat(filepath.Join(git, n))
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if err := os.Link(filepath.Join(git, n), filepath.Join(s.dir, n)); err != nil {
			s.release()
			return nil, fmt.Errorf("stage %s: %w", git, err)
		}
		s.orig[n] = info
	}
	return s, nil
}

// top sorts the entries at the git directory's top for the sandbox:
// shared, the directories written in place; kept, everything else but
// gitData's files and the staging directories, read-only.
func (s *gitStage) top() (shared, kept []string) {
	entries, _ := os.ReadDir(s.git)
	for _, e := range entries {
		n := e.Name()
		p := filepath.Join(s.git, n)
		switch {
		case n == stageDirName, slices.Contains(gitData, n) && e.Type().IsRegular():
		case slices.Contains(gitShared, n) && e.IsDir():
			shared = append(shared, p)
		default:
			kept = append(kept, p)
		}
	}
	return shared, kept
}

// finish brings back the gitData files the command replaced, made or
// removed (a regular file of one link only: a command's own), removes the
// staging directory and lets go of its lock. A file the command removed
// is removed from the repository only if nothing else replaced it there
// meanwhile. It returns what did not come back, and why.
func (s *gitStage) finish() []string {
	var failed []string
	for _, n := range gitData {
		staged := filepath.Join(s.dir, n)
		target := filepath.Join(s.git, n)
		orig, had := s.orig[n]
		info, err := os.Lstat(staged)
		switch {
		case err != nil:
			if cur, err := os.Lstat(target); had && err == nil && os.SameFile(cur, orig) {
				if err := os.Remove(target); err != nil {
					failed = append(failed, fmt.Sprintf("%s: %v", n, err))
				}
			}
		case had && os.SameFile(info, orig):
			// Untouched, or written in place (the same file).
		case !info.Mode().IsRegular() || links(info) != 1:
			failed = append(failed, n+": not a file of its own")
		default:
			if err := os.Rename(staged, target); err != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", n, err))
			}
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		failed = append(failed, fmt.Sprintf("remove the staging directory: %v", err))
	}
	s.release()
	return failed
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
