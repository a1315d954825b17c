package activities

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/memory"
	"github.com/talaria-agent/talaria/internal/modelinfo"
	"github.com/talaria-agent/talaria/internal/telemetry"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// Activities holds what the activities need. Register it with Register.
type Activities struct {
	Store *models.Store
	Tools *tools.Registry
	// Providers resolves the providers serving a model name, primary first,
	// then fallbacks in order; nil, an error or an empty list makes model
	// calls fail non-retryably.
	Providers func(model string) ([]llm.Endpoint, error)
	// Price is the price of the model an endpoint served, as this worker
	// knows it (configuration, that endpoint's discovery); nil or false:
	// the bundled table's.
	Price func(ctx context.Context, ep llm.Endpoint) (modelinfo.Price, bool)
	// Vision reports whether the model an endpoint serves takes pictures,
	// as this worker knows it (configuration, that endpoint's discovery,
	// the bundled table; unknown is no). Nil: the bundled table's.
	Vision func(ctx context.Context, ep llm.Endpoint) bool
	// Worker reports this worker's model configuration now (it may change
	// while the worker runs: serve reloads config.yaml). Nil: Stream and
	// MaxTokens, and no model of the worker's own.
	Worker func() turnapi.WorkerModel
	// ContextWindow is a model's context window as this worker knows it
	// (configuration, discovery, the bundled table; 0: unknown), for the
	// compaction threshold of turns that leave it to the model. Nil: no
	// window is known.
	ContextWindow func(ctx context.Context, model string) int
	// Guardrail is a pluggable check run before every tool call (nil: none).
	Guardrail loop.Hook
	// Stream selects SSE streaming for model calls.
	Stream bool
	// MaxTokens caps each reply (0: provider default).
	MaxTokens int
	// SystemPrompt is the fallback system prompt, for sessions that have
	// none stored.
	SystemPrompt string
	// BuildPrompt builds a new session's system prompt (once: it is stored
	// with the session and reused byte for byte). Nil: SystemPrompt.
	BuildPrompt func(ctx context.Context, model, workdir string) (string, error)
	// Home is $TALARIA_HOME of this worker (local delivery of cron results).
	Home string
	// Deliverers add delivery targets for cron results by scheme.
	Deliverers map[string]Deliverer
	// CompactKeepFirst and CompactKeepLast are how many messages a
	// compaction keeps verbatim at the start and the end (0: 3 and 20);
	// CompactPruneChars caps an old tool output shown to the summariser
	// (0: compress.DefaultPruneChars).
	CompactKeepFirst, CompactKeepLast, CompactPruneChars int
	// ApprovalPolicy is this worker's configured approval mode (ask, off or
	// deny), reported to every turn it begins: senders may narrow it, never
	// widen it. Empty: ask.
	ApprovalPolicy string
	// Policy bounds what tools touch (environment, secrets, file roots):
	// ToolPolicy of this worker's configuration. Nil: the safe default.
	Policy *tools.Policy
	Logger *slog.Logger
	// Metrics count what the activities do (model calls, tokens, tool
	// calls, turns and scheduled runs ended); nil counts nothing.
	Metrics *telemetry.Metrics
	// Clock is the time of the key pools' cool-downs (nil: time.Now).
	Clock func() time.Time
	// Memory recalls past sessions for a turn's first model call
	// (memory.recall; nil: off). RecallBudget bounds its prefetch (0:
	// config.DefaultPrefetchBudget), RecallBytes the block (0:
	// config.DefaultRecallBytes).
	Memory       memory.Provider
	RecallBudget time.Duration
	RecallBytes  int
	// Summaries: session summaries are kept for recall (memory.recall),
	// a compaction's for the session it continued; Embed gives each its
	// vector (nil: none).
	Summaries bool
	Embed     memory.Embedder
	// Auxiliary is the auxiliary model (config auxiliary; nil: none): it
	// writes the questions like a turn's message that recall searches
	// with too.
	Auxiliary *llm.Endpoint
}

// Register registers every activity under its stable name.
func (a *Activities) Register(r worker.ActivityRegistry) {
	r.RegisterActivityWithOptions(a.BeginTurn, activity.RegisterOptions{Name: turnapi.BeginTurnName})
	r.RegisterActivityWithOptions(a.CallModel, activity.RegisterOptions{Name: turnapi.CallModelName})
	r.RegisterActivityWithOptions(a.ExecuteTools, activity.RegisterOptions{Name: turnapi.ExecuteToolsName})
	r.RegisterActivityWithOptions(a.AnswerCalls, activity.RegisterOptions{Name: turnapi.AnswerCallsName})
	r.RegisterActivityWithOptions(a.PrepareDelegation, activity.RegisterOptions{Name: turnapi.PrepareDelegationName})
	r.RegisterActivityWithOptions(a.JudgeGoal, activity.RegisterOptions{Name: turnapi.JudgeGoalName})
	r.RegisterActivityWithOptions(a.FinishTurn, activity.RegisterOptions{Name: turnapi.FinishTurnName})
	r.RegisterActivityWithOptions(a.CompressContext, activity.RegisterOptions{Name: turnapi.CompressContextName})
	r.RegisterActivityWithOptions(a.ReserveTurn, activity.RegisterOptions{Name: turnapi.ReserveTurnName})
	r.RegisterActivityWithOptions(a.SaveGrant, activity.RegisterOptions{Name: turnapi.SaveGrantName})
	r.RegisterActivityWithOptions(a.TurnPolicy, activity.RegisterOptions{Name: turnapi.TurnPolicyName})
	r.RegisterActivityWithOptions(a.RecordEvent, activity.RegisterOptions{Name: turnapi.RecordEventName})
	r.RegisterActivityWithOptions(a.PrepareReview, activity.RegisterOptions{Name: turnapi.PrepareReviewName})
	r.RegisterActivityWithOptions(a.Deliver, activity.RegisterOptions{Name: turnapi.DeliverName})
	r.RegisterActivityWithOptions(a.PreRunScript, activity.RegisterOptions{Name: turnapi.PreRunScriptName})
	r.RegisterActivityWithOptions(a.FinishCronRun, activity.RegisterOptions{Name: turnapi.FinishCronRunName})
	r.RegisterActivityWithOptions(a.SummarizeSession, activity.RegisterOptions{Name: turnapi.SummarizeSessionName})
	r.RegisterActivityWithOptions(a.SyncMemory, activity.RegisterOptions{Name: turnapi.SyncMemoryName})
}

func (a *Activities) logger() *slog.Logger {
	return cmp.Or(a.Logger, slog.Default())
}

// heartbeat keeps the activity's attempt alive while it works (KeepAlive):
// it returns the context to work in and a stop that ends the heartbeats.
func (a *Activities) heartbeat(ctx context.Context, details func() any) (context.Context, func()) {
	return KeepAlive(ctx, 500*time.Millisecond, details, a.logger())
}

// closePublisher flushes a turn's live events; they are best effort and
// never fail the activity.
func (a *Activities) closePublisher(ctx context.Context, p *events.Publisher) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := p.Close(cctx); err != nil {
		a.logger().Debug("live events not fully written", "error", err)
	}
}
