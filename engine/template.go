package engine

import (
	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/workflows"
)

// TurnTemplate is the turn configuration the configuration gives every
// turn: model, budget, timeouts, limits, approvals and compaction, working
// in workdir. Chat, send and cron start from it.
func TurnTemplate(cfg config.Config, workdir string) workflows.TurnInput {
	limits := cfg.Loop
	if cfg.Model.MaxTokens > 0 {
		// Cut-off tool calls are re-asked with the configured cap doubled.
		limits.BaseMaxTokens = cfg.Model.MaxTokens
	}
	return workflows.TurnInput{
		Model: cfg.Model.Name, MaxIterations: cfg.MaxIterations, Workdir: workdir,
		ModelTimeout: cfg.Model.Timeout, MaxRetryAfter: cfg.Model.MaxRetryAfter, HeartbeatTimeout: cfg.HeartbeatTimeout,
		ModelAttempts: cfg.Model.Attempts, Limits: limits,
		Approvals:  workflows.ApprovalSettings{Mode: workflows.ApprovalMode(cfg.Approvals.Mode), Timeout: cfg.Approvals.Timeout},
		Compaction: CompactionFor(cfg),
	}
}
