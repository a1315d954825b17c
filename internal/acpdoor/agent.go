package acpdoor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

// Agent answers one editor connection. Sessions are Talaria's: an ACP
// session id is a Talaria session id, so a session made in the editor is
// listed by `talaria sessions` and can be continued by any door.
type Agent struct {
	rt      *engine.Runtime
	cfg     config.Config
	version string
	newID   func() string
	logger  *slog.Logger
	conn    *acp.AgentSideConnection
	w       *lockedWriter

	mu       sync.Mutex
	sessions map[string]*session // the sessions this connection made or loaded
	// prompts counts the prompts on their way in, by session id.
	prompts map[string]*promptCount
	// base ends when Serve returns; followers are the goroutines following
	// a turn outside a prompt (a loaded session's running turn), which
	// Serve waits for.
	base      context.Context
	followers sync.WaitGroup
	closed    bool // Serve has returned: no new followers
}

// session is what the connection knows of one of its sessions.
type session struct {
	cwd string
	// prompt is the session's prompt while one runs.
	prompt *prompt
	// following is the turn whose events this connection sends.
	following string
}

var (
	_ acp.Agent       = (*Agent)(nil)
	_ acp.AgentLoader = (*Agent)(nil)
)

// New returns the agent for rt. newID makes fresh session ids.
func New(rt *engine.Runtime, cfg config.Config, version string, newID func() string, logger *slog.Logger) *Agent {
	return &Agent{rt: rt, cfg: cfg, version: version, newID: newID, logger: logger, sessions: map[string]*session{}, prompts: map[string]*promptCount{}}
}

// Serve answers the editor on in and out until it closes its end or ctx
// ends. Messages the SDK would only log (not JSON, not JSON-RPC, too long)
// are answered with JSON-RPC errors here.
func (a *Agent) Serve(ctx context.Context, out io.Writer, in io.Reader) {
	base, cancel := context.WithCancel(ctx)
	a.base = base
	w := &lockedWriter{w: out}
	a.w = w
	pr, pw := io.Pipe()
	a.conn = acp.NewAgentSideConnection(a, w, pr)
	a.conn.SetLogger(a.logger)
	// The editor's messages flow only once the connection is complete.
	go guard(in, pw, w, a.sawLine)
	select {
	case <-a.conn.Done():
	case <-ctx.Done():
	}
	_ = pr.Close()
	// What follows turns for this editor stops with it; the turns go on.
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	cancel()
	a.followers.Wait()
}

// goFollow runs f while the connection lasts; false when it has ended.
func (a *Agent) goFollow(f func()) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.goFollowLocked(f)
}

// goFollowLocked is goFollow for a caller that holds a.mu.
func (a *Agent) goFollowLocked(f func()) bool {
	if a.closed {
		return false
	}
	a.followers.Add(1)
	go func() {
		defer a.followers.Done()
		f()
	}()
	return true
}

// Initialize declares what this agent does: sessions load (a turn goes on
// without its editor), prompts take text, resource links, embedded text
// resources and pictures, not audio.
func (a *Agent) Initialize(_ context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: acp.PromptCapabilities{EmbeddedContext: true, Image: true},
		},
		AgentInfo:   &acp.Implementation{Name: "talaria", Title: acp.Ptr("Talaria"), Version: a.version},
		AuthMethods: []acp.AuthMethod{},
	}, nil
}

// Authenticate has nothing to do: the model's credentials are Talaria's
// configuration, never the editor's.
func (a *Agent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

// NewSession makes a session whose turns run in the editor's working
// directory. The editor is told the slash commands right after it learns
// the session's id.
func (a *Agent) NewSession(_ context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	cwd, err := checkCwd(p.Cwd)
	if err != nil {
		return acp.NewSessionResponse{}, err
	}
	id := a.newID()
	a.mu.Lock()
	a.sessions[id] = &session{cwd: cwd}
	a.mu.Unlock()
	a.w.afterResponse(id, func() {
		a.goFollow(func() { _ = a.send(a.base, id, commandsUpdate()) })
	})
	return acp.NewSessionResponse{SessionId: acp.SessionId(id)}, nil
}

// LoadSession replays a Talaria session to the editor (its users' messages,
// the replies and the tool calls) and, when one of its turns is running,
// follows that turn from its start: the editor sees it as if it had never
// gone away.
func (a *Agent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	cwd, err := checkCwd(p.Cwd)
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	id := string(p.SessionId)
	if _, err := a.rt.Store.Session(ctx, id); err != nil {
		return acp.LoadSessionResponse{}, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("no session %q (see talaria sessions list)", id)})
	}
	running := ""
	if pr, err := a.rt.Running(ctx, id); err == nil {
		running = pr.TurnID
	}
	history, err := replay(ctx, a.rt.Store, id, running)
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	if running == "" {
		// A turn that began while the messages were read is followed too.
		if pr, err := a.rt.Running(ctx, id); err == nil {
			running = pr.TurnID
		}
	}
	updates := append([]acp.SessionUpdate{commandsUpdate()}, history...)
	if u, ok, err := plan(ctx, a.rt.Store, id); err != nil {
		a.logger.Warn("acp: the session's todo list", "session", id, "error", err)
	} else if ok {
		updates = append(updates, u)
	}
	for _, u := range updates {
		if err := a.send(ctx, id, u); err != nil {
			return acp.LoadSessionResponse{}, err
		}
	}
	a.mu.Lock()
	s, ok := a.sessions[id]
	if !ok {
		s = &session{}
		a.sessions[id] = s
	}
	s.cwd = cwd
	a.mu.Unlock()
	if running != "" && a.claimFollow(id, running) {
		// The turn's events are sent as they come; the editor learns the
		// turn ended from the last of them.
		a.goFollow(func() {
			a.follow(a.base, id, running, false)
			a.unfollow(id, running)
		})
	}
	return acp.LoadSessionResponse{}, nil
}

// follow sends a turn's events to the editor until the turn's last event
// (or ctx ends), and asks the editor about the approvals and questions the
// turn waits on; a request the turn stopped waiting for (decided
// elsewhere, timed out, replayed from the past) is withdrawn. own: the
// turn is this connection's prompt's, so a question the editor cannot be
// asked is answered "no one is available" (another door's turn keeps its
// question for its own door).
func (a *Agent) follow(ctx context.Context, sessionID, turnID string, own bool) {
	var t translator
	asks := map[string]context.CancelFunc{}
	var wg sync.WaitGroup
	defer func() {
		for _, cancel := range asks {
			cancel()
		}
		wg.Wait()
	}()
	ask := func(callID string, f func(context.Context)) {
		actx, cancel := context.WithCancel(ctx)
		asks[callID] = cancel
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(actx)
		}()
	}
	settled := func(data string) {
		var e struct {
			CallID string `json:"call_id"`
		}
		if json.Unmarshal([]byte(data), &e) == nil {
			if cancel, ok := asks[e.CallID]; ok {
				cancel()
			}
		}
	}
	for ev := range events.Tail(ctx, a.rt.Store, turnID, 0, 50*time.Millisecond) {
		switch ev.Kind {
		case events.KindApproval:
			var ae turnapi.ApprovalEvent
			if json.Unmarshal([]byte(ev.Data), &ae) == nil {
				ask(ae.CallID, func(c context.Context) { a.askApproval(c, sessionID, turnID, ae) })
			}
			continue
		case events.KindQuestion:
			var qe turnapi.QuestionEvent
			if json.Unmarshal([]byte(ev.Data), &qe) == nil && (own || len(qe.Choices) > 0) {
				ask(qe.CallID, func(c context.Context) { a.askQuestion(c, sessionID, turnID, qe) })
			}
			continue
		case events.KindApprovalDecided, events.KindAnswered:
			settled(ev.Data)
			continue
		}
		updates := t.updates(ev)
		if planChanged(ev) {
			if u, ok, err := plan(ctx, a.rt.Store, sessionID); err != nil {
				a.logger.Warn("acp: the session's todo list", "session", sessionID, "error", err)
			} else if ok {
				updates = append(updates, u)
			}
		}
		for _, u := range updates {
			if err := a.send(ctx, sessionID, u); err != nil {
				a.logger.Debug("acp: session update not sent", "session", sessionID, "error", err)
			}
		}
	}
}

// approvalOptions are the choices an approval offers the editor.
var approvalOptions = []acp.PermissionOption{
	{OptionId: acp.PermissionOptionId(turnapi.ChoiceOnce), Name: "Allow once", Kind: acp.PermissionOptionKindAllowOnce},
	{OptionId: acp.PermissionOptionId(turnapi.ChoiceAlways), Name: "Allow always", Kind: acp.PermissionOptionKindAllowAlways},
	{OptionId: acp.PermissionOptionId(turnapi.ChoiceDeny), Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
}

// askApproval asks the editor about a dangerous command and gives the
// turn the answer. A cancelled request (the prompt was cancelled) decides
// nothing: the turn's stop ends the wait.
func (a *Agent) askApproval(ctx context.Context, sessionID, turnID string, ae turnapi.ApprovalEvent) {
	title := "Run: " + oneLine(ae.Command, 200)
	resp, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{
		SessionId: acp.SessionId(sessionID),
		ToolCall: acp.ToolCallUpdate{
			ToolCallId: acp.ToolCallId(ae.CallID), Title: acp.Ptr(title), Kind: acp.Ptr(acp.ToolKindExecute),
			Status:   acp.Ptr(acp.ToolCallStatusPending),
			RawInput: map[string]any{"command": ae.Command, "reason": ae.Reason},
		},
		Options: approvalOptions,
	})
	if err != nil || resp.Outcome.Selected == nil || ctx.Err() != nil {
		return
	}
	choice := turnapi.ApprovalChoice(resp.Outcome.Selected.OptionId)
	if !choice.Known() {
		choice = turnapi.ChoiceDeny
	}
	if err := a.rt.Decide(ctx, turnID, ae.CallID, choice); err != nil {
		a.logger.Warn("acp: give the turn the editor's decision", "turn", turnID, "error", err)
	}
}

// askQuestion puts a clarify question with choices to the editor as a
// permission request whose options are the choices; a question without
// choices, or one the editor does not answer, gets Talaria's "no one is
// available" answer, and the turn goes on.
func (a *Agent) askQuestion(ctx context.Context, sessionID, turnID string, qe turnapi.QuestionEvent) {
	answer := workflows.NoUserAnswer
	if len(qe.Choices) > 0 {
		opts := make([]acp.PermissionOption, len(qe.Choices))
		for i, c := range qe.Choices {
			opts[i] = acp.PermissionOption{OptionId: acp.PermissionOptionId(fmt.Sprint(i)), Name: c, Kind: acp.PermissionOptionKindAllowOnce}
		}
		resp, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{
			SessionId: acp.SessionId(sessionID),
			ToolCall: acp.ToolCallUpdate{ToolCallId: acp.ToolCallId(qe.CallID), Title: acp.Ptr(oneLine(qe.Question, 200)),
				Kind: acp.Ptr(acp.ToolKindOther), Status: acp.Ptr(acp.ToolCallStatusPending)},
			Options: opts,
		})
		if ctx.Err() != nil {
			return // the turn stopped waiting
		}
		if err == nil && resp.Outcome.Selected != nil {
			var n int
			if _, err := fmt.Sscan(string(resp.Outcome.Selected.OptionId), &n); err == nil && n >= 0 && n < len(qe.Choices) {
				answer = qe.Choices[n]
			}
		}
	}
	if err := a.rt.Answer(ctx, turnID, qe.CallID, answer); err != nil {
		a.logger.Warn("acp: give the turn the editor's answer", "turn", turnID, "error", err)
	}
}

// send sends one update of a session.
func (a *Agent) send(ctx context.Context, sessionID string, u acp.SessionUpdate) error {
	return a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: acp.SessionId(sessionID), Update: u})
}

// claimFollow makes this connection the follower of a session's turn;
// false when it follows it already.
func (a *Agent) claimFollow(id, turnID string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok || s.following == turnID {
		return false
	}
	s.following = turnID
	return true
}

// unfollow records that a turn's events are no longer followed.
func (a *Agent) unfollow(id, turnID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[id]; ok && s.following == turnID {
		s.following = ""
	}
}

// checkCwd requires the editor's working directory to be an absolute path
// of an existing directory.
func checkCwd(cwd string) (string, error) {
	if !filepath.IsAbs(cwd) {
		return "", acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("cwd %q is not an absolute path", cwd)})
	}
	info, err := os.Stat(cwd)
	if err != nil || !info.IsDir() {
		return "", acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("cwd %q is not a directory", cwd)})
	}
	return filepath.Clean(cwd), nil
}

// The session methods ACP offers beyond these are not declared in
// Initialize; a client that calls them anyway is told so.

func (a *Agent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionClose)
}

func (a *Agent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

func (a *Agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

func (a *Agent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

func (a *Agent) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetMode)
}
