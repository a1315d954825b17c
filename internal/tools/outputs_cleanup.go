package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// DefaultOutputRetention is how long kept outputs stay: a session's
// directory where nothing changed for longer is removed when serve starts.
const DefaultOutputRetention = 30 * 24 * time.Hour

// RemoveSessionOutputs removes the kept outputs of a session (base is the
// outputs directory, $TALARIA_HOME/outputs). Nothing kept is no error;
// nothing outside base is touched, whatever symlinks it holds.
func RemoveSessionOutputs(base, sessionID string) error {
	name, err := SessionDirName(sessionID)
	if err != nil {
		return fmt.Errorf("remove kept outputs: %w", err)
	}
	root, err := openOutputsRoot(base, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove kept outputs of %s: %w", sessionID, err)
	}
	defer root.Close()
	if err := root.RemoveAll(name); err != nil {
		return fmt.Errorf("remove kept outputs of %s: %w", sessionID, err)
	}
	return nil
}

// PruneOutputs removes from base (the outputs directory) every entry in
// which nothing changed since before now-retention: a session's directory
// whose files are all that old, and files or links left at the top. It
// returns how many entries it removed; an entry that cannot be removed is
// reported after the others were tried.
func PruneOutputs(base string, retention time.Duration, now time.Time) (int, error) {
	root, err := openOutputsRoot(base, false)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("prune kept outputs: %w", err)
	}
	defer root.Close()
	entries, err := os.ReadDir(base)
	if err != nil {
		return 0, fmt.Errorf("prune kept outputs: %w", err)
	}
	cutoff := now.Add(-retention)
	removed := 0
	var errs []error
	for _, e := range entries {
		if !lastChange(base, e).Before(cutoff) {
			continue
		}
		if err := root.RemoveAll(e.Name()); err != nil {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("prune kept outputs: %w", err)
	}
	return removed, nil
}

// lastChange is the newest modification time of an entry of base and,
// for a directory (not followed when a symlink), of everything in it. An
// entry that cannot be read counts as changed now, so it is kept.
func lastChange(base string, e fs.DirEntry) time.Time {
	info, err := e.Info()
	if err != nil {
		return time.Now()
	}
	newest := info.ModTime()
	if !e.IsDir() {
		return newest
	}
	_ = filepath.WalkDir(filepath.Join(base, e.Name()), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			newest = time.Now()
			return filepath.SkipAll
		}
		if fi, err := d.Info(); err == nil && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
		return nil
	})
	return newest
}
