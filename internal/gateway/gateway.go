package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/polling"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

// Gateway runs platforms against the engine.
type Gateway struct {
	rt  *engine.Runtime
	cfg config.Config
	// mu guards platforms, access and runCtx: a platform that did not
	// answer at start is added when it does (Add).
	mu        sync.RWMutex
	platforms map[string]Platform
	access    map[string]*Access
	runCtx    context.Context // Run's, once it runs
	groups    GroupSessions
	logger    *slog.Logger
	worker    worker.Worker
	// holder names this process in the platforms' leases.
	holder string
	// pairing bounds strangers' pairing attempts.
	pairing pairAttempts
	// reset says when a chat's next message starts a new session;
	// platformReset, for the platforms that have their own.
	reset         ResetPolicy
	platformReset map[string]ResetPolicy
	// now is the clock of the resets.
	now func() time.Time
	// limits bound the files taken from messages; transcriber transcribes
	// voice memos (nil: none configured).
	limits      attach.Limits
	transcriber *attach.Transcriber
	// order takes a chat's webhook updates one after the other; tries
	// counts the takes of updates that panicked, to set aside those that
	// always do (takeGuarded).
	order chatOrder
	tries tries
	// webhookWithin replaces webhookWithin when set (tests).
	webhookWithin time.Duration
	// secret keys the references buttons carry (buttonRef), loaded once.
	secretMu sync.Mutex
	secret   []byte
}

// Options configure a Gateway.
type Options struct {
	Runtime *engine.Runtime
	Config  config.Config
	// Platforms are the connected platforms, each with who may use it.
	Platforms []Platform
	Access    map[string]*Access
	Groups    GroupSessions
	// Reset is the session reset policy (zero: DefaultReset);
	// PlatformReset, by platform name, those of platforms that have their
	// own.
	Reset         *ResetPolicy
	PlatformReset map[string]ResetPolicy
	// Clock tells the time of the session resets (nil: time.Now).
	Clock func() time.Time
	// Limits bound the files taken from messages, by kind (zero:
	// attach.DefaultLimits).
	Limits *attach.Limits
	Logger *slog.Logger
}

// New builds a gateway and starts its worker (the gateway's task queue:
// the workflow that carries a chat message to its reply, and its
// activities, which need the platforms' credentials).
func New(o Options) (*Gateway, error) {
	g := &Gateway{rt: o.Runtime, cfg: o.Config, platforms: map[string]Platform{}, access: map[string]*Access{}, groups: o.Groups, logger: o.Logger,
		holder: NewHolder(), reset: DefaultReset, platformReset: o.PlatformReset, now: o.Clock, limits: attach.DefaultLimits}
	if o.Limits != nil {
		g.limits = *o.Limits
	}
	tc := o.Config.Transcription
	g.transcriber = attach.NewTranscriber(tc.BaseURL, os.Getenv(tc.APIKeyEnv), tc.Model, nil)
	if g.now == nil {
		g.now = time.Now
	}
	if o.Reset != nil {
		g.reset = *o.Reset
	}
	g.logger = cmp.Or(g.logger, slog.Default())
	g.groups = cmp.Or(g.groups, GroupPerUser)
	for name, a := range o.Access {
		g.access[name] = a
	}
	for _, p := range o.Platforms {
		g.platforms[p.Name()] = p
		g.link(p)
		if g.access[p.Name()] == nil {
			return nil, fmt.Errorf("gateway: no access rules for %s", p.Name())
		}
	}
	wo := worker.Options{MaxHeartbeatThrottleInterval: time.Second, DefaultHeartbeatThrottleInterval: time.Second}
	polling.Tune(&wo)
	w := worker.New(o.Runtime.Client, workflows.GatewayTaskQueue, wo)
	workflows.RegisterGateway(w)
	acts := &chatActivities{g: g}
	acts.register(w)
	acts.registerDelivery(w)
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("gateway: start worker: %w", err)
	}
	g.worker = w
	return g, nil
}

// platform is the connected platform of that name, or nil.
func (g *Gateway) platform(name string) Platform {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.platforms[name]
}

// accessOf is who may use a platform.
func (g *Gateway) accessOf(name string) *Access {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.access[name]
}

// Add takes on a platform that answered after the gateway started: its
// updates are taken (once Run runs) and its messages sent from now on.
func (g *Gateway) Add(p Platform, access *Access) error {
	if access == nil {
		return fmt.Errorf("gateway: no access rules for %s", p.Name())
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.platforms[p.Name()]; ok {
		return fmt.Errorf("gateway: %s is there already", p.Name())
	}
	g.platforms[p.Name()], g.access[p.Name()] = p, access
	g.link(p)
	if g.runCtx != nil {
		g.start(g.runCtx, p)
	}
	return nil
}

// link gives a platform that serves the files it sends the reader of
// stored files.
func (g *Gateway) link(p Platform) {
	if l, ok := p.(FileLinker); ok {
		l.ReadAttachmentsWith(func(ctx context.Context, id string) ([]byte, string, error) {
			a, err := g.rt.Store.Attachment(ctx, id)
			if err != nil {
				return nil, "", err
			}
			return a.Data, a.MIME, nil
		})
	}
}

// Close stops the gateway's worker.
func (g *Gateway) Close() {
	if g.worker != nil {
		g.worker.Stop()
	}
}

// Run takes the updates of every platform until ctx ends, each while this
// process holds the platform's lease (several replicas may run; one takes
// each platform's updates, another takes over when it dies).
func (g *Gateway) Run(ctx context.Context) {
	g.mu.Lock()
	g.runCtx = ctx
	for _, p := range g.platforms {
		g.start(ctx, p)
	}
	g.mu.Unlock()
	<-ctx.Done()
}

// start takes a platform's updates until ctx ends (a webhook platform's
// come to Webhooks).
func (g *Gateway) start(ctx context.Context, p Platform) {
	if _, hooked := p.(Hooked); hooked {
		return
	}
	go g.consume(ctx, p)
}

// note records in the platform's lease what this process last took, or
// why its poll failed, for `talaria gateway status`.
func (g *Gateway) note(ctx context.Context, p Platform, updateID, failure string) {
	if len(failure) > 280 {
		failure = failure[:280]
	}
	if err := g.rt.Store.NoteLease(ctx, LeaseName(p), g.holder, updateID, time.Now(), failure); err != nil {
		g.logger.Debug("gateway: note the lease", "error", err)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// take handles one update: a stranger gets a refusal (and no model call),
// a command is carried out, a message becomes a ChatMessageWorkflow.
func (g *Gateway) take(ctx context.Context, p Platform, u Update) error {
	if u.Chat.ID == "" {
		return nil // nothing this gateway handles (an edit, a join...)
	}
	if !g.allowed(ctx, p, u.User) {
		if u.Button != "" {
			g.refusePress(ctx, p, u)
			return nil
		}
		if paired, err := g.tryPair(ctx, p, u); paired || err != nil {
			return err
		}
		if g.accessOf(p.Name()).ShouldRefuse(u.User, time.Now()) {
			if _, err := p.SendPart(ctx, Outgoing{ChatID: u.Chat.ID, ReplyTo: u.MessageID}, p.Parts(Refusal)[0]); err != nil {
				g.logger.Warn("gateway: refuse a stranger", "platform", p.Name(), "error", err)
			}
		}
		g.logger.Info("gateway: a message from a user who is not allowed", "platform", p.Name(), "user", u.User)
		return nil
	}
	if strings.TrimSpace(u.Text) == "" && u.Button == "" && len(u.Files) == 0 {
		return nil
	}
	// A press, a command or an answer is carried out once, however often
	// its update comes (a new turn is, by its workflow's id).
	key := doneKey(p, u)
	if done, err := g.rt.Store.Claimed(ctx, key); done || err != nil {
		return err
	}
	done, err := g.act(ctx, p, u)
	if done && err == nil {
		_, err = g.rt.Store.ClaimTool(ctx, key)
	}
	return err
}

// act carries out a press, a command, or the answer to the running
// turn's question (done), or else hands the message over as a turn.
func (g *Gateway) act(ctx context.Context, p Platform, u Update) (done bool, err error) {
	if u.Button != "" {
		return true, g.press(ctx, p, u)
	}
	if len(u.Files) > 0 {
		return g.actWithFiles(ctx, p, u)
	}
	if cmd, ok := ParseCommand(u.Text, p.BotName()); ok {
		return true, g.command(ctx, p, u, cmd)
	}
	// A question of the running turn is answered by the next message.
	if answered, err := g.answerPending(ctx, u, u.Text); answered || err != nil {
		return answered, err
	}
	return false, g.handOver(ctx, p, u, u.Text, workflows.BusyMode(""), nil)
}

// actWithFiles takes a message's files and hands the message over with
// them; the sender sees the transcript of a voice memo (and why a file was
// not taken) first. A voice memo answers the running turn's question by
// its transcript.
func (g *Gateway) actWithFiles(ctx context.Context, p Platform, u Update) (bool, error) {
	t, err := g.takeFiles(ctx, p, u)
	if err != nil {
		return false, err
	}
	g.tellOnce(ctx, p, u, t.tell)
	if len(t.images) == 0 && len(t.transcripts) > 0 && strings.TrimSpace(u.Text) == "" && len(t.notes) == len(t.transcripts) {
		if answered, err := g.answerPending(ctx, u, strings.Join(t.transcripts, "\n\n")); answered || err != nil {
			return answered, err
		}
	}
	return false, g.handOver(ctx, p, u, t.Message(u.Text), workflows.BusyMode(""), t.images)
}

// handOver starts the workflow that carries the message to its reply. Its
// id is the update's, so a second start (the update received again) finds
// the first and changes nothing.
func (g *Gateway) handOver(ctx context.Context, p Platform, u Update, text string, mode workflows.BusyMode, images []turnapi.Image) error {
	if mode == "" {
		m, err := workflows.ParseBusyMode(g.cfg.BusyInputMode)
		if err != nil {
			m = workflows.BusyQueue
		}
		mode = m
	}
	chat, err := g.messageSession(ctx, u, g.now())
	if err != nil {
		return err
	}
	if owned, err := g.ownSession(ctx, p, u, chat); !owned || err != nil {
		return err
	}
	in := engine.WithModel(engine.TurnTemplate(g.cfg, g.workdir()), chat.Model)
	in.SessionID, in.UserMessage, in.Images, in.Owner = chat.SessionID, text, images, chat.Key
	id := updateWorkflowID(p, u)
	// The coordinator tells the workflow (its id is the request id) the
	// turn the message became and how it ended (Notify).
	msg := workflows.Message{RequestID: id, Text: text, Mode: mode, Turn: in, Notify: true}
	// The workflow is started first, so it is there to be told; the
	// message is delivered here, in the order the chat sent its messages
	// (queued messages run in that order), and the workflow's own delivery
	// of the same request id finds it and changes nothing.
	if err := g.startOnce(ctx, id, workflows.ChatMessageWorkflowName, workflows.ChatMessageInput{
		Platform: p.Name(), Account: p.Account(), ChatID: u.Chat.ID, MessageID: u.MessageID, Message: msg,
	}); err != nil {
		return err
	}
	return g.rt.Send(ctx, in.SessionID, msg)
}

// doneKey is the claim that records an update carried out (a press, a
// command, an answer) or set aside: it is taken once.
func doneKey(p Platform, u Update) string {
	return "gateway-update/" + updateWorkflowID(p, u)
}

// updateWorkflowID is the id of the workflow an update starts.
func updateWorkflowID(p Platform, u Update) string {
	return fmt.Sprintf("gateway/%s/%s/%s", p.Name(), p.Account(), u.ID)
}

// startOnce starts a workflow of the gateway's task queue under id, once:
// a second start (the update received again) finds the first and changes
// nothing, also after it ended.
func (g *Gateway) startOnce(ctx context.Context, id, workflow string, in any) error {
	_, err := g.rt.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: workflows.GatewayTaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}, workflow, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) || temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return nil // taken before
	}
	return err
}

// workdir is where chat turns resolve relative paths and may write:
// sandbox.workspace (talaria-workspace beside $TALARIA_HOME by default),
// outside the home that commands never see; made private when missing.
func (g *Gateway) workdir() string {
	dir := g.cfg.WorkspaceDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		g.logger.Warn("gateway: make the chats' workspace", "dir", dir, "error", err)
	}
	return dir
}
