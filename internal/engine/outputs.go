package engine

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/models"
)

// OutputsDir is where this home keeps tool outputs longer than the
// model's cap: one directory per session.
func OutputsDir(home string) string {
	return filepath.Join(home, tools.OutputsDirName)
}

// PruneOutputs removes the kept outputs of home that did not change for
// longer than tools.DefaultOutputRetention (a session's directory as a
// whole). serve calls it when it starts; what it removed or could not
// remove is one log line.
func PruneOutputs(home string, now time.Time, logger *slog.Logger) {
	if home == "" {
		return
	}
	logger = cmp.Or(logger, slog.Default())
	n, err := tools.PruneOutputs(OutputsDir(home), tools.DefaultOutputRetention, now)
	if err != nil {
		logger.Warn("kept tool outputs: some old ones could not be removed", "dir", OutputsDir(home), "removed", n, "err", err)
		return
	}
	if n > 0 {
		logger.Info("kept tool outputs: removed old ones", "dir", OutputsDir(home), "removed", n, "retention", tools.DefaultOutputRetention)
	}
}

// DeleteSession removes a session and everything stored for it (see
// models.Store.DeleteSession), then, when it was the last session of its
// lineage, the lineage's kept outputs in home (the sessions of a lineage
// share them); the external memory provider home's configuration turns
// on is told to forget it (forgetSession). A session that is not there is models.ErrNotFound and
// nothing is removed.
func DeleteSession(ctx context.Context, st *models.Store, home, sessionID string) error {
	lineage := sessionID
	if sess, err := st.Session(ctx, sessionID); err == nil && sess.LineageID != "" {
		lineage = sess.LineageID
	}
	if err := st.DeleteSession(ctx, sessionID); err != nil {
		return err
	}
	if home == "" {
		return nil
	}
	// What an external memory provider holds of the session goes too; a
	// provider that fails costs a warning, not the deletion.
	if cfg, err := config.Load(home, os.Getenv); err == nil {
		forgetSession(ctx, cfg, os.Getenv, sessionID, slog.Default())
	}
	left, err := st.LineageSessions(ctx, lineage)
	if err != nil {
		return fmt.Errorf("session %s deleted; its lineage's kept outputs: %w", sessionID, err)
	}
	if left > 0 {
		return nil
	}
	if err := tools.RemoveSessionOutputs(OutputsDir(home), lineage); err != nil {
		return fmt.Errorf("session %s deleted, but its kept outputs were not: %w", sessionID, err)
	}
	return nil
}
