package main

import (
	"path/filepath"

	talaria "github.com/talaria-agent/talaria"
	"github.com/talaria-agent/talaria/config"
)

// checkServeDB refuses a database named (by --db, TALARIA_DB or the
// configuration) that is not the one the running serve of this home uses:
// a command working through serve would otherwise read, change or delete
// serve's data while the person meant another database.
func checkServeDB(cfg config.Config, info talaria.ServeInfo) error {
	if cfg.DB == config.Default(cfg.Home).DB || sameDB(cfg.DB, info.DB) {
		return nil
	}
	return usagef("talaria serve (pid %d) on %s uses the database %s, not %s: stop it to work on another database, or leave --db and TALARIA_DB unset",
		info.PID, cfg.Home, redactPassword(info.DB), redactPassword(cfg.DB))
}

// sameDB says whether two database names are one database: the same DSN,
// or the same file once resolved.
func sameDB(a, b string) bool {
	if a == b {
		return true
	}
	ra, errA := filepath.Abs(a)
	rb, errB := filepath.Abs(b)
	if errA != nil || errB != nil {
		return false
	}
	if ea, err := filepath.EvalSymlinks(ra); err == nil {
		ra = ea
	}
	if eb, err := filepath.EvalSymlinks(rb); err == nil {
		rb = eb
	}
	return ra == rb
}
