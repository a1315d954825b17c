package engine

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/models"
)

// Connect makes a client-only Runtime for a running `talaria serve`: its
// Temporal and its database, as it published them.
func Connect(ctx context.Context, cfg config.Config, info ServeInfo, logger *slog.Logger) (rt *Runtime, err error) {
	if logger == nil {
		logger = slog.Default()
	}
	cfg.Temporal.Address = info.TemporalAddress
	cfg.Temporal.Namespace = info.Namespace
	cfg.DB = info.DB
	rt = &Runtime{Config: cfg, logger: logger}
	defer func() {
		if err != nil {
			rt.Close()
			rt = nil
		}
	}()
	if rt.Store, err = models.Open(ctx, info.DB); err != nil {
		return nil, fmt.Errorf("open the database of talaria serve (pid %d): %w", info.PID, err)
	}
	if rt.Client, err = Dial(ctx, cfg.Temporal, logger); err != nil {
		return nil, fmt.Errorf("talaria serve (pid %d): %w", info.PID, err)
	}
	return rt, nil
}
