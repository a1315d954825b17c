package models

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"gorm.io/gorm"
)

// accessReadWrite asks access(2) for read and write permission.
const accessReadWrite = 0x4 | 0x2 // R_OK | W_OK

var (
	// ErrStoreGone reports that the SQLite file a Store opened was removed,
	// or replaced by another file, under the running process. Writes made
	// now would go to a file nobody will read again: the Store refuses
	// them, and the process should stop and be restarted.
	ErrStoreGone = errors.New("the store was removed or replaced")

	// ErrUnreachable reports that the database does not answer (a server
	// down, a file that cannot be opened any more); it may come back.
	ErrUnreachable = errors.New("the store does not answer")
)

// storeFile is the identity of an opened SQLite file: its path and what
// stat said of it when it was opened (device and inode).
type storeFile struct {
	path string
	info os.FileInfo
}

// identify records the identity of the file at path.
func identify(path string) (*storeFile, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("identify the database file: %w", err)
	}
	return &storeFile{path: path, info: info}, nil
}

// File returns the SQLite file the Store opened, or "" for PostgreSQL and
// in-memory databases.
func (s *Store) File() string {
	if s.file == nil {
		return ""
	}
	return s.file.path
}

// checkFile reports whether the SQLite file is still the one opened: an
// error wrapping ErrStoreGone when its path names nothing or another file,
// ErrUnreachable when it cannot be looked at. It is a stat call, cheap
// enough to run before every write.
func (s *Store) checkFile() error {
	if s.file == nil {
		return nil
	}
	info, err := os.Stat(s.file.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s was removed", ErrStoreGone, s.file.path)
	case err != nil:
		return fmt.Errorf("%w: %v", ErrUnreachable, err)
	case !os.SameFile(info, s.file.info):
		return fmt.Errorf("%w: %s is another file now", ErrStoreGone, s.file.path)
	}
	return nil
}

// Check reports whether the store is usable: nil, an error wrapping
// ErrStoreGone (the SQLite file was removed or replaced: permanent), or one
// wrapping ErrUnreachable (the database does not answer within ctx, or the
// file cannot be opened: it may recover).
func (s *Store) Check(ctx context.Context) error {
	if err := s.checkFile(); err != nil {
		return err
	}
	if s.file != nil {
		// A new connection must be able to open the file, as the pool's
		// next one will. The file is not opened to find out: closing a
		// descriptor of it would drop the SQLite locks this process holds
		// on it (POSIX advisory locks belong to the process).
		if err := syscall.Access(s.file.path, accessReadWrite); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUnreachable, s.file.path, err)
		}
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	if _, err := sqlDB.ExecContext(ctx, "SELECT 1"); err != nil {
		return fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	// The file may have gone while the query ran.
	return s.checkFile()
}

// registerFileGuard makes every write of a Store on a SQLite file check
// first that the file is still the one it opened (checkFile), so a write
// never lands in a removed file or a stranger's.
func (s *Store) registerFileGuard() error {
	if s.file == nil {
		return nil
	}
	guard := func(tx *gorm.DB) {
		if tx.Error == nil {
			if err := s.checkFile(); err != nil {
				_ = tx.AddError(err)
			}
		}
	}
	cb := s.db.Callback()
	return errors.Join(
		cb.Create().Before("gorm:create").Register("talaria:file_guard_create", guard),
		cb.Update().Before("gorm:update").Register("talaria:file_guard_update", guard),
		cb.Delete().Before("gorm:delete").Register("talaria:file_guard_delete", guard),
		cb.Row().Before("gorm:row").Register("talaria:file_guard_row", guard),
		cb.Raw().Before("gorm:raw").Register("talaria:file_guard_raw", guard),
	)
}
