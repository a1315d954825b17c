package engine

import (
	"log/slog"
	"os"
	"path/filepath"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/embedded"
	"github.com/talaria-agent/talaria/models"
)

// exposedBits are the permission bits that let users other than the owner
// at a store path.
const exposedBits = 0o077

// storePaths lists the paths holding conversations, workflow state or the
// credential of cfg: $TALARIA_HOME, the SQLite store and, when embedded, the
// Temporal data, each database with its -wal and -shm files.
func storePaths(cfg config.Config) []string {
	paths := []string{cfg.Home, filepath.Join(cfg.Home, serveFile)}
	if db := models.SQLiteFile(cfg.DB); db != "" {
		paths = append(paths, db, db+"-wal", db+"-shm")
	}
	if cfg.Temporal.Embedded() {
		dir := filepath.Join(cfg.Home, "temporal")
		paths = append(paths, dir)
		for _, name := range []string{embedded.DBFileName, embedded.VisibilityFileName} {
			db := filepath.Join(dir, name)
			paths = append(paths, db, db+"-wal", db+"-shm")
		}
		paths = append(paths, filepath.Dir(CredentialPath(cfg.Home)), CredentialPath(cfg.Home))
	}
	return paths
}

// warnExposedStore logs one warning for each existing store path that other
// users may access, with the command that fixes it.
func warnExposedStore(logger *slog.Logger, cfg config.Config) {
	for _, p := range storePaths(cfg) {
		info, err := os.Stat(p)
		if err != nil || info.Mode().Perm()&exposedBits == 0 {
			continue
		}
		fix := "chmod 600 " + p
		if info.IsDir() {
			fix = "chmod 700 " + p
		}
		logger.Warn("other users can read this talaria store path", "path", p,
			"mode", info.Mode().Perm().String(), "fix", fix)
	}
}
