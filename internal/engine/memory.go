package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/memory"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// ErrRecallOff: memory.recall is off, so no summaries are kept.
var ErrRecallOff = errors.New("memory recall is off (memory.recall: true in config.yaml turns it on)")

// MemoryProvider is the memory provider cfg turns on over store (nil when
// memory.recall is off). The built-in recall is the provider "recall";
// another provider's name is refused here until it is wired.
func MemoryProvider(cfg config.Config, store *models.Store, logger *slog.Logger) (memory.Provider, error) {
	switch name := cfg.Memory.ProviderName(); name {
	case "":
		return nil, nil
	case config.MemoryRecall:
		return memory.NewRecall(store, MemoryEmbedder(cfg), logger), nil
	default:
		return nil, fmt.Errorf("memory provider %q is not available in this build", name)
	}
}

// MemoryEmbedder is the embedder of memory.embeddings (nil: none).
func MemoryEmbedder(cfg config.Config) memory.Embedder {
	return memory.NewEmbedder(cfg.Memory.Embeddings, os.Getenv, nil)
}

// withMemory gives the activities recall and summaries when memory.recall
// is on; a provider that cannot be made costs a warning, not the worker.
func (rt *Runtime) withMemory(acts *activities.Activities) {
	mem := rt.Config.Memory
	if !mem.Recall {
		return
	}
	p, err := MemoryProvider(rt.Config, rt.Store, rt.logger)
	if err != nil {
		rt.logger.Warn("memory: recall is off for this worker", "error", err)
		return
	}
	acts.Memory, acts.RecallBudget, acts.RecallBytes = p, mem.Budget(), mem.Bytes()
	acts.Summaries, acts.Embed = true, MemoryEmbedder(rt.Config)
}

// StartSummary starts the summary of a session that ended (reason: reset,
// idle...), once per state of the session (workflows.SummaryWorkflowID);
// nothing when memory.recall is off. It returns the workflow's id.
func (rt *Runtime) StartSummary(ctx context.Context, sessionID, reason string) (string, error) {
	if !rt.Config.Memory.Recall {
		return "", ErrRecallOff
	}
	sess, err := rt.Store.Session(ctx, sessionID)
	if err != nil {
		return "", fmt.Errorf("summarise session %s: %w", sessionID, err)
	}
	id := workflows.SummaryWorkflowID(sess.ID, sess.TurnCount)
	_, err = rt.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: workflows.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, workflows.SummaryWorkflowName, turnapi.SummarizeSessionInput{SessionID: sess.ID, Reason: reason})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return "", fmt.Errorf("summarise session %s: %w", sessionID, err)
	}
	return id, nil
}

// Summarize summarises a session now and waits for it (a session already
// summarised at its current state is left as it is).
func (rt *Runtime) Summarize(ctx context.Context, sessionID string) error {
	id, err := rt.StartSummary(ctx, sessionID, "command")
	if err != nil {
		return err
	}
	if err := rt.Client.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		return fmt.Errorf("summarise session %s: %w", sessionID, err)
	}
	return nil
}

// summaryBatch bounds the idle sessions one sweep starts summaries of.
const summaryBatch = 50

// summarizeIdle starts the summaries of sessions idle longer than
// memory.summary_idle (the scheduler's housekeeping).
func (rt *Runtime) summarizeIdle(ctx context.Context, now time.Time) error {
	if !rt.Config.Memory.Recall {
		return nil
	}
	idle, err := rt.Store.SessionsToSummarize(ctx, now.Add(-rt.Config.Memory.Idle()), summaryBatch)
	if err != nil {
		return fmt.Errorf("summarise idle sessions: %w", err)
	}
	var errs []error
	for _, s := range idle {
		if _, err := rt.StartSummary(ctx, s.ID, string(memory.EndIdle)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(idle) > 0 {
		rt.logger.Info("memory: summarising idle sessions", "sessions", len(idle)-len(errs))
	}
	return errors.Join(errs...)
}
