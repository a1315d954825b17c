package engine

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/embedded"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/mcp"
	"github.com/talaria-agent/talaria/internal/polling"
	"github.com/talaria-agent/talaria/internal/prompt"
	"github.com/talaria-agent/talaria/internal/telemetry"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// Options choose what a Runtime starts.
type Options struct {
	// Worker runs the turn worker in this process.
	Worker bool
	// EmbeddedPort is the embedded frontend port (0: a free one). Used only
	// when the configuration names no external Temporal.
	EmbeddedPort int
	Logger       *slog.Logger
	// Guardrail is a pluggable check run before every tool call (nil: none).
	Guardrail loop.Hook
	// Private says the embedded Temporal is this process's own, for as
	// long as it runs (chat without serve), not a server for others. It
	// then runs without Temporal's system worker service (scavengers,
	// batch operations, schedules: serve runs them), so it starts sooner
	// and Close does not wait a second for that service's pollers to
	// drain from the frontend.
	Private bool
	// Telemetry is the process's metrics and traces (nil: none): the
	// client, the worker, the activities and the embedded server report there.
	Telemetry *telemetry.Telemetry
	// Interceptors are worker interceptors added after Talaria's own (a
	// test holds a workflow's step with one to order a race).
	Interceptors []interceptor.WorkerInterceptor
}

// Runtime is a started Talaria process.
type Runtime struct {
	Config config.Config
	Store  *models.Store
	Client client.Client
	Server *embedded.Server
	// Worker is the turn worker (nil in a client).
	Worker worker.Worker
	// Models is the worker's model configuration, read at each model call
	// (serve replaces it when config.yaml changes); nil in a client.
	Models *ModelConfig
	// Peer names the server of a client in what it says while waiting
	// ("talaria serve at HOST:PORT"); empty: "temporal at ADDRESS".
	Peer string
	// processes are the background processes the worker's process tool
	// started; they are killed when it closes.
	processes *tools.Processes
	// stopReaper stops killing the processes of reset sessions.
	stopReaper func()
	// mcp are the MCP servers whose tools the worker offers.
	mcp *mcp.Servers
	// Notify receives the lines a waiting client shows (the server
	// stopped answering, answers again); nil: they are logged.
	Notify func(line string)
	logger *slog.Logger
	// telemetry is Options.Telemetry.
	telemetry *telemetry.Telemetry
	// interceptors are Options.Interceptors.
	interceptors []interceptor.WorkerInterceptor

	// work holds new activities while work is paused (PauseWork).
	work workGate
	// visibilityTimer marks the search attributes ready once the
	// namespace cache knows them (prepareVisibility); Close stops it.
	visibilityTimer *time.Timer
}

// Start opens the store, embeds or dials Temporal and, when asked, starts the
// worker. On error everything started so far is stopped again.
func Start(ctx context.Context, cfg config.Config, opts Options) (rt *Runtime, err error) {
	logger := cmp.Or(opts.Logger, slog.Default())
	rt = &Runtime{Config: cfg, logger: logger, telemetry: opts.Telemetry, interceptors: opts.Interceptors}
	defer func() {
		if err != nil {
			rt.Close()
			rt = nil
		}
	}()
	warnExposedStore(logger, cfg)
	setBinaryChecksum() // before the embedded server's workers and ours
	if rt.Store, err = models.Open(ctx, cfg.DB); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	copts, err := clientTelemetry(opts.Telemetry)
	if err != nil {
		return nil, err
	}
	tc := cfg.Temporal
	if tc.Embedded() {
		if rt.Server, err = startEmbedded(ctx, cfg, opts, logger); err != nil {
			return nil, err
		}
		tc.Address = rt.Server.HostPort()
		if opts.Worker {
			copts = append(copts, withOwnerIdentity)
		}
		rt.Client, err = dial(ctx, tc, rt.Server.ClientTLS(), logger, copts...)
	} else {
		rt.Client, err = Dial(ctx, tc, cfg.Home, logger, copts...)
	}
	if err != nil {
		return nil, err
	}
	if opts.Worker {
		rt.prepareVisibility(ctx)
		rt.takeOverAtStart(ctx) // before the worker: no attempt it fails is live
		if err := rt.startWorker(opts.Guardrail); err != nil {
			return nil, err
		}
		rt.repairAtStart(ctx)
	}
	return rt, nil
}

// startEmbedded starts the embedded Temporal under cfg.Home; only clients
// presenting the credential kept there (made at first start) may connect.
func startEmbedded(ctx context.Context, cfg config.Config, opts Options, logger *slog.Logger) (*embedded.Server, error) {
	cred, err := EnsureCredential(cfg.Home)
	if err != nil {
		return nil, fmt.Errorf("start embedded temporal: %w", err)
	}
	srv, err := embedded.Start(ctx, embedded.Options{
		DataDir:   filepath.Join(cfg.Home, "temporal"),
		Namespace: cfg.Temporal.Namespace,
		Port:      opts.EmbeddedPort,
		Logger:    logger,
		LogLevel:  serverLogLevel(cfg.LogLevel),
		TLS:       cred,

		NoSystemWorker: opts.Private,
		Meter:          opts.Telemetry.Meter(telemetry.ScopeServer),
		// Turns are found by session in the Web UI (workflows.SearchAttributes).
		SearchAttributes: workflows.SearchAttributes(),
	})
	if err != nil {
		return nil, fmt.Errorf("start embedded temporal: %w", err)
	}
	return srv, nil
}

// serverLogLevel keeps the embedded server's routine warnings (e.g. about
// features it runs without) out of the terminal unless asked for.
func serverLogLevel(level string) slog.Level {
	switch level {
	case "debug":
		return slog.LevelDebug
	case "info":
		return slog.LevelInfo
	}
	return slog.LevelError
}

// startWorker registers the turn workflow and its activities and starts polling.
func (rt *Runtime) startWorker(guardrail loop.Hook) error {
	cfg := rt.Config
	rt.processes = tools.NewProcesses()
	offered, err := enabledTools(cfg.Tools.Enabled, cfg.Tools.Disabled, builtinTools(cfg.Home, rt.Store, chatSender(rt.Client, rt.Store, sendMessageTimeout), rt.processes, webSearchTool(cfg))...)
	if err != nil {
		return err
	}
	offered = withoutUnconfigured(cfg, offered, rt.logger)
	// The memory provider's own tools are offered only while it is on.
	mem := rt.memoryProvider()
	offered = append(offered, memoryTools(cfg, mem)...)
	if len(cfg.MCPServers) > 0 {
		rt.mcp = mcp.New(cfg.MCPServers, ToolPolicy(cfg), rt.logger)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		for _, t := range rt.mcp.Discover(ctx) {
			if !slices.Contains(cfg.Tools.Disabled, t.Name()) {
				offered = append(offered, t)
			}
		}
		cancel()
	}
	// An execute_code program may call the file, web and shell tools
	// offered here.
	if offered, err = tools.WithCodeTools(offered); err != nil {
		return err
	}
	registry, err := tools.NewRegistry(offered...)
	if err != nil {
		return fmt.Errorf("tool registry: %w", err)
	}
	// Commands the worker runs must not read its secrets from /proc.
	tools.HideWorkerEnvironment()
	// What tools may touch is this worker's configuration, never a sender's.
	policy := ToolPolicy(cfg)
	// Tool outputs kept longer than their retention go before any turn runs.
	PruneOutputs(cfg.Home, time.Now(), rt.logger)
	rt.Models = NewModelConfig(cfg)
	rt.Models.SetLogger(rt.logger)
	acts := &activities.Activities{
		Store:         rt.Store,
		Home:          cfg.Home,
		Tools:         registry,
		BuildPrompt:   promptBuilder(cfg.Home, rt.Models, registry.Names(), rt.logger),
		Providers:     rt.Models.Providers,
		Worker:        rt.Models.Worker,
		Price:         rt.Models.PriceAt,
		Vision:        rt.Models.VisionAt,
		ContextWindow: rt.Models.ContextWindow,
		Stream:        cfg.Model.Streaming(),
		MaxTokens:     cfg.Model.MaxTokens,
		SystemPrompt:  DefaultSystemPrompt,
		Guardrail:     guardrail,
		Logger:        rt.logger,

		CompactKeepFirst: cfg.Compression.KeepFirst,
		CompactKeepLast:  cfg.Compression.KeepLast,
		ApprovalPolicy:   cfg.Approvals.Mode,
		Policy:           &policy,
		Metrics:          rt.telemetry.Metrics(),
	}
	rt.withMemory(acts, mem)
	// Results for chats go through the gateway, which holds the
	// platforms' credentials.
	chats := map[string]activities.Deliverer{}
	for _, p := range tools.ChatPlatforms {
		chats[p] = chatDeliverer(rt.Client, p)
	}
	deliverers := maps.Clone(chats)
	deliverers["home"], deliverers["origin"] = homeDeliverer(rt.Store, chats), originDeliverer(rt.Store, chats)
	deliverers["email"] = emailDeliverer(cfg.Delivery.SMTP)
	acts.Deliverers = loggedDeliverers(rt.logger, deliverers)
	opts := worker.Options{
		// Heartbeats reach the server at least twice a second, so a
		// cancel (an interrupt) reaches an in-flight model call or tool
		// within a second or two instead of 80% of the heartbeat timeout.
		MaxHeartbeatThrottleInterval:     500 * time.Millisecond,
		DefaultHeartbeatThrottleInterval: 500 * time.Millisecond,
		// While work is paused (a store that does not answer) a new
		// activity waits at its start; running ones go on. Activity
		// failures and results stay small in history. Inside that,
		// content the database refuses fails its activity at once
		// instead of being retried as if the database were away.
		Interceptors: append([]interceptor.WorkerInterceptor{gateInterceptor(&rt.work),
			activities.NewBoundsInterceptor(), activities.RejectionInterceptor()}, rt.interceptors...),
	}
	polling.Tune(&opts)
	w := worker.New(rt.Client, workflows.TaskQueue, opts)
	workflows.Register(w)
	acts.Register(w)
	rt.registerSessionActivities(w)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	rt.Worker = w
	rt.stopReaper = reapProcesses(rt.processes, rt.Store.Retired, reapInterval, rt.logger)
	return nil
}

// reapInterval is how often a worker looks for reset sessions whose
// background processes it still runs.
const reapInterval = 3 * time.Second

// reapProcesses kills, every interval, the processes of conversations
// retired says are over, until the returned stop is called.
func reapProcesses(ps *tools.Processes, retired tools.RetiredFunc, interval time.Duration, logger *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, interval, func(ctx context.Context) {
			n, err := ps.Reap(ctx, retired)
			switch {
			case err != nil && ctx.Err() == nil:
				logger.Warn("background processes: cannot check for reset sessions", "err", err)
			case n > 0:
				logger.Info("background processes: killed those of reset sessions", "killed", n)
			}
		})
	}()
	return func() { cancel(); <-done }
}

// Every calls f every interval until ctx ends, and then returns.
func Every(ctx context.Context, interval time.Duration, f func(context.Context)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			f(ctx)
		}
	}
}

// promptBuilder builds a new session's system prompt from $TALARIA_HOME
// (identity, memory, skills), the user's working directory (project context
// file) and the offered tools. The model and provider it names are those
// models holds when it builds (serve may have reloaded them since start).
// Its warnings (a file left out) go to logger.
func promptBuilder(home string, models *ModelConfig, toolNames []string, logger *slog.Logger) func(context.Context, string, string) (string, error) {
	guidance := offeredGuidance(toolNames)
	return func(_ context.Context, model, workdir string) (string, error) {
		cur, _ := models.Current()
		model = cmp.Or(model, cur.Name)
		p, err := prompt.Build(prompt.Inputs{
			Home: home, Workdir: workdir, Model: model, Provider: providerHost(cur.Endpoint()),
			Now: time.Now(), ToolGuidance: guidance, Logger: logger,
		})
		if err != nil {
			return "", err
		}
		return p.Text, nil
	}
}

// providerHost names the provider by its endpoint's host.
func providerHost(endpoint string) string {
	if host := llm.Host(endpoint); host != "" {
		return host
	}
	return endpoint
}

// Close stops the worker, the client, the embedded server and the store.
func (rt *Runtime) Close() {
	if rt == nil {
		return
	}
	if rt.visibilityTimer != nil {
		rt.visibilityTimer.Stop()
	}
	if rt.Worker != nil {
		rt.Worker.Stop()
		rt.Worker = nil
	}
	if rt.stopReaper != nil {
		rt.stopReaper()
	}
	if rt.processes != nil {
		rt.processes.Close()
	}
	if rt.mcp != nil {
		rt.mcp.Close()
	}
	if rt.Client != nil {
		rt.Client.Close()
	}
	if rt.Server != nil {
		if err := rt.Server.Stop(); err != nil {
			rt.logger.Warn("stop embedded temporal", "error", err)
		}
		releaseOwnership(rt.ownerDir())
	}
	if rt.Store != nil {
		_ = rt.Store.Close()
	}
}

// NoEndpointHelp tells the user how to configure a model endpoint.
const NoEndpointHelp = "no model endpoint is configured: run 'talaria model set --base-url URL --model NAME' " +
	"(any OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 for Ollama; a running serve picks it up), " +
	"or set OPENAI_BASE_URL and/or OPENAI_API_KEY"

// DefaultSystemPrompt is sent first in every request until the prompt builder
// composes one per session.
const DefaultSystemPrompt = "You are Talaria, a capable AI agent. You work through tools: read and " +
	"write files, run shell commands in a terminal, and keep a todo list for multi-step work. " +
	"Relative paths are resolved against the user's working directory. Be direct and finish the task."
