package embedded

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.temporal.io/server/common/config"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
)

// DBFileName is the SQLite file Start keeps in Options.DataDir.
const DBFileName = "temporal.db"

// fileAttrs are the SQLite settings of file mode. The server's plugin passes
// every attribute that is not a URI parameter as a PRAGMA on each connection.
//
// WAL with synchronous=NORMAL: a transaction is durable once its commit
// record is in the WAL file, which the OS keeps even if the process is killed;
// only a power loss or kernel crash can lose the last transactions (FULL would
// also fsync on each commit and cost ~ms per write). busy_timeout makes a
// connection wait for a lock instead of failing with SQLITE_BUSY.
var fileAttrs = map[string]string{
	"mode":         "rwc",
	"journal_mode": "wal",
	"synchronous":  "normal",
	"busy_timeout": "10000",
}

// prepareDataDir creates dir if needed and checks that it is a writable
// directory. All failures wrap ErrDataDir.
func prepareDataDir(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%w: DataDir is empty (set it or use Ephemeral)", ErrDataDir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: resolve %q: %w", ErrDataDir, dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("%w: create %s: %w", ErrDataDir, abs, err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("%w: stat %s: %w", ErrDataDir, abs, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%w: %s is not a directory", ErrDataDir, abs)
	}
	probe, err := os.CreateTemp(abs, ".probe-*")
	if err != nil {
		return "", fmt.Errorf("%w: %s not writable: %w", ErrDataDir, abs, err)
	}
	name := probe.Name()
	closeErr := probe.Close()
	if err := errors.Join(closeErr, os.Remove(name)); err != nil {
		return "", fmt.Errorf("%w: probe write in %s: %w", ErrDataDir, abs, err)
	}
	return abs, nil
}

// sqlConfig returns the server's SQL store settings for the given mode.
func sqlConfig(ephemeral bool, dbPath string) (*config.SQL, error) {
	cfg := &config.SQL{
		PluginName:        sqliteplugin.PluginName,
		ConnectAttributes: map[string]string{},
	}
	if ephemeral {
		// Each ephemeral server needs its own memory database: the plugin
		// shares one connection per DSN across the whole process.
		id, err := randomID()
		if err != nil {
			return nil, err
		}
		cfg.DatabaseName = "talaria-" + id
		cfg.ConnectAttributes["mode"] = "memory"
		cfg.ConnectAttributes["cache"] = "shared"
		return cfg, nil
	}
	cfg.DatabaseName = uriPath(dbPath)
	for k, v := range fileAttrs {
		cfg.ConnectAttributes[k] = v
	}
	return cfg, nil
}

// uriPath escapes the characters that would otherwise end the path part of
// the "file:PATH?params" URI the plugin builds. SQLite decodes %HH escapes.
func uriPath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
}

func randomID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random database name: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// dbExists reports whether the database file is present.
func dbExists(path string) (bool, error) {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("%w: stat %s: %w", ErrDataDir, path, err)
	}
}

// createPrivateFile creates an empty file only its owner can read and write,
// whatever the umask. SQLite gives the database's -wal, -shm and journal
// files the mode of the database file, so they stay private too.
func createPrivateFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("%w: create %s: %w", ErrDataDir, path, err)
	}
	if err := errors.Join(f.Chmod(0o600), f.Close()); err != nil {
		return fmt.Errorf("%w: restrict %s to its owner: %w", ErrDataDir, path, err)
	}
	return nil
}

// removeIfExists removes p; a missing p is not an error.
func removeIfExists(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: remove leftover %s: %w", ErrDataDir, p, err)
	}
	return nil
}
