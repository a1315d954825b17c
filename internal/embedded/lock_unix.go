//go:build unix

package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockFileName is the file whose exclusive flock marks DataDir as in use.
const lockFileName = "temporal.lock"

// dirLock holds an exclusive advisory lock on a data directory. Two servers
// on one database would fight over shard ownership, so the second is refused.
type dirLock struct {
	f *os.File
}

func lockDataDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: open %s: %w", ErrDataDir, path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		closeErr := f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrDataDirLocked, dir)
		}
		return nil, errors.Join(fmt.Errorf("%w: lock %s: %w", ErrDataDir, path, err), closeErr)
	}
	return &dirLock{f: f}, nil
}

func (l *dirLock) release() error {
	if l == nil {
		return nil
	}
	// Closing the descriptor drops the flock.
	return l.f.Close()
}
