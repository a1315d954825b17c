package engine

import (
	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/workflows"
)

// TurnTemplate is the turn configuration the configuration gives every
// turn: budget, limits, approvals and compaction, working in workdir. Chat,
// send and cron start from it.
//
// It names no model and no model-call timeouts or attempts: those are the
// configuration of the worker that runs the turn (serve's, or chat's own
// when it embeds the worker), read when the turn begins and at each model
// call. A sender that wants another model for one turn sets Model (chat
// -m, send -m, a cron job's --model): WithModel.
func TurnTemplate(cfg config.Config, workdir string) workflows.TurnInput {
	limits := cfg.Loop
	if cfg.Model.MaxTokens > 0 {
		// Cut-off tool calls are re-asked with the configured cap doubled;
		// a worker with a cap of its own reports it and it wins.
		limits.BaseMaxTokens = cfg.Model.MaxTokens
	}
	return workflows.TurnInput{
		MaxIterations: cfg.MaxIterations, Workdir: workdir,
		HeartbeatTimeout: cfg.HeartbeatTimeout, Limits: limits,
		Approvals:  workflows.ApprovalSettings{Mode: workflows.ApprovalMode(cfg.Approvals.Mode), Timeout: cfg.Approvals.Timeout},
		Compaction: CompactionFor(cfg),
		MemorySync: memorySyncs(cfg),
		Delegation: workflows.DelegationSettings{MaxIterations: cfg.Delegation.MaxIterations,
			MaxDepth: cfg.Delegation.MaxDepth, MaxConcurrent: cfg.Delegation.MaxConcurrent},
	}
}

// WithModel makes model (when not empty) the turn's explicit model, in
// place of the worker's.
func WithModel(in workflows.TurnInput, model string) workflows.TurnInput {
	if model != "" {
		in.Model = model
	}
	return in
}

// memorySyncs says whether turns are recorded with the memory provider
// after they answer: an external one is on (the built-in recall reads
// Talaria's own store and needs no sync). Pure.
func memorySyncs(cfg config.Config) bool {
	name := cfg.Memory.ProviderName()
	return name != "" && name != config.MemoryRecall
}
