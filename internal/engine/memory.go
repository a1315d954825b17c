package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/memory"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// ErrRecallOff: memory.recall is off, so no summaries are kept.
var ErrRecallOff = errors.New("memory recall is off (memory.recall: true in config.yaml turns it on)")

// MemoryProvider is the memory provider cfg turns on over store (nil when
// memory.recall is off): the built-in recall ("recall", the default), or
// Honcho, Mem0 or Supermemory over their HTTP APIs at memory.honcho,
// memory.mem0 or memory.supermemory.
func MemoryProvider(cfg config.Config, store *models.Store, logger *slog.Logger) (memory.Provider, error) {
	return memoryProvider(cfg, store, os.Getenv, logger)
}

// memoryProvider is MemoryProvider with the keys read through getenv.
func memoryProvider(cfg config.Config, store *models.Store, getenv func(string) string, logger *slog.Logger) (memory.Provider, error) {
	switch name := cfg.Memory.ProviderName(); name {
	case "":
		return nil, nil
	case config.MemoryRecall:
		return memory.NewRecall(store, MemoryEmbedder(cfg), logger), nil
	default:
		p, err := memory.NewExternal(name, memoryEndpoint(cfg.Memory, name), getenv, nil, logger)
		if err != nil {
			return nil, fmt.Errorf("memory provider %s: %w", name, err)
		}
		return p, nil
	}
}

// memoryEndpoint is the endpoint of the external provider name. Pure.
func memoryEndpoint(m config.Memory, name string) config.Endpoint {
	switch name {
	case config.MemoryHoncho:
		return m.Honcho
	case config.MemoryMem0:
		return m.Mem0
	case config.MemorySupermemory:
		return m.Supermemory
	}
	return config.Endpoint{}
}

// MemoryEmbedder is the embedder of memory.embeddings (nil: none).
func MemoryEmbedder(cfg config.Config) memory.Embedder {
	return memory.NewEmbedder(cfg.Memory.Embeddings, os.Getenv, nil)
}

// memoryProvider is the provider this worker's configuration turns on
// (nil: memory.recall is off); a provider that cannot be made costs a
// warning, not the worker, and memory is then off for it.
func (rt *Runtime) memoryProvider() memory.Provider {
	if !rt.Config.Memory.Recall {
		return nil
	}
	p, err := MemoryProvider(rt.Config, rt.Store, rt.logger)
	if err != nil {
		rt.logger.Warn("memory: recall is off for this worker", "error", err)
		return nil
	}
	return p
}

// withMemory gives the activities recall, sync, session ends and
// summaries through p (nil: memory is off).
func (rt *Runtime) withMemory(acts *activities.Activities, p memory.Provider) {
	if p == nil {
		return
	}
	mem := rt.Config.Memory
	acts.Memory, acts.RecallBudget, acts.RecallBytes = p, mem.Budget(), mem.Bytes()
	acts.Summaries, acts.Embed = true, MemoryEmbedder(rt.Config)
	acts.Auxiliary = auxiliaryEndpoint(rt.Config.Auxiliary, os.Getenv)
}

// auxiliaryEndpoint is the auxiliary model's endpoint, its keys api_keys
// or the variable api_key_env names (read through getenv); nil when none
// is configured. Pure but for getenv.
func auxiliaryEndpoint(a config.Auxiliary, getenv func(string) string) *llm.Endpoint {
	if !a.Configured() {
		return nil
	}
	key := ""
	if a.APIKeyEnv != "" {
		key = getenv(a.APIKeyEnv)
	}
	e := endpointOf(a.ProviderOptions, a.Endpoint(), config.Keys(key, a.APIKeys), strings.TrimSpace(a.Model))
	return &e
}

// memoryTools are the provider's own tools that the configuration offers
// (tools.enabled, when set, names them or their toolset, recall;
// tools.disabled does not), or none when p is nil. Pure but for p.
func memoryTools(cfg config.Config, p memory.Provider) []tools.Tool {
	if p == nil {
		return nil
	}
	var out []tools.Tool
	for _, t := range p.Tools() {
		names := []string{t.Name(), tools.MetaOf(t).Toolset}
		named := func(list []string) bool {
			return slices.ContainsFunc(names, func(n string) bool { return slices.Contains(list, n) })
		}
		if (len(cfg.Tools.Enabled) == 0 || named(cfg.Tools.Enabled)) && !named(cfg.Tools.Disabled) {
			out = append(out, t)
		}
	}
	return out
}

// forgetTimeout bounds the provider's Forget when a session is deleted.
const forgetTimeout = 15 * time.Second

// forgetSession has the external memory provider cfg turns on (its key
// read through getenv) forget a deleted session; a failure is one warning line. The built-in recall's
// summaries go with the session in the store.
func forgetSession(ctx context.Context, cfg config.Config, getenv func(string) string, sessionID string, logger *slog.Logger) {
	name := cfg.Memory.ProviderName()
	if name == "" || name == config.MemoryRecall {
		return
	}
	p, err := memoryProvider(cfg, nil, getenv, logger)
	if err == nil {
		fctx, cancel := context.WithTimeout(ctx, forgetTimeout)
		err = p.Forget(fctx, sessionID)
		cancel()
	}
	if err != nil {
		logger.Warn("memory: the memory provider did not forget the deleted session", "provider", name, "session", sessionID, "error", err)
	}
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
