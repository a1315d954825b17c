package acpdoor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.temporal.io/api/serviceerror"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

// prompt is one session/prompt while it runs. The hand-over names the
// message (request), so that a cancel can withdraw it; handing is set
// while the hand-over is on its way; turn is the turn the message became,
// steered when that turn is another sender's running turn the message only
// steered (a cancel leaves it running). stop ends the prompt's waiting at
// once (a cancel during the hand-over or of a steer). Its fields are
// guarded by Agent.mu.
type prompt struct {
	request   string
	handing   bool
	turn      string
	steered   bool
	cancelled bool
	ctx       context.Context
	stop      context.CancelFunc
}

// promptCount numbers a session's prompts as they arrive (the guard sees
// them before the SDK hands them to Prompt) and as they begin; a cancel
// that comes while some are on their way cancels those (cancelledUpTo:
// the prompts numbered up to it).
type promptCount struct {
	arrived, begun, cancelledUpTo int
}

// cancelReason is what a stopped turn records.
const cancelReason = "cancelled in the editor"

// cancelTimeout bounds what a cancel does in Temporal (stop a turn, take
// a queued prompt back).
const cancelTimeout = time.Minute

// Prompt hands the prompt to the session's turn and streams the turn's
// events until it ends.
func (a *Agent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	id := string(p.SessionId)
	pr, err := a.claim(id)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	defer a.release(id, pr)
	cancelled := acp.PromptResponse{StopReason: acp.StopReasonCancelled}
	if a.isCancelled(pr) {
		return cancelled, nil // cancelled on its way in
	}
	pics, err := readPictures(p.Prompt, attach.DefaultLimits.Image)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	// The pictures are kept only for a prompt that becomes a turn: a slash
	// command reads the text alone.
	text := promptText(p.Prompt, nil)
	if text == "" {
		return acp.PromptResponse{}, acp.NewInvalidParams(map[string]any{"error": "the prompt has no text"})
	}
	if name, args, ok := parseCommand(text); ok {
		if len(pics) > 0 {
			return acp.PromptResponse{}, refusePicture("/%s takes no pictures: send the picture in a prompt of its own", name)
		}
		answer, err := a.command(context.WithoutCancel(ctx), id, a.cwd(id), name, args)
		switch {
		case a.isCancelled(pr):
			return cancelled, nil
		case err != nil:
			return acp.PromptResponse{}, fmt.Errorf("/%s: %w", name, err)
		}
		if err := a.send(ctx, id, acp.UpdateAgentMessageText(answer)); err != nil {
			return acp.PromptResponse{}, err
		}
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}
	if a.isCancelled(pr) {
		return cancelled, nil
	}
	images, notes, err := a.keepPictures(ctx, id, pics)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	if len(notes) > 0 {
		text = promptText(p.Prompt, notes)
	}
	turnID, err := a.handOver(id, pr, text, images)
	if err != nil {
		if a.isCancelled(pr) {
			return cancelled, nil
		}
		return acp.PromptResponse{}, fmt.Errorf("hand the prompt to session %s: %w", id, err)
	}
	a.mu.Lock()
	own := !pr.steered // a steered turn's questions are its own sender's
	a.mu.Unlock()
	fctx, stopFollowing := context.WithCancel(a.base)
	done := make(chan struct{})
	if a.claimFollow(id, turnID) {
		if !a.goFollow(func() {
			defer close(done)
			a.follow(fctx, id, turnID, own)
			a.unfollow(id, turnID)
		}) {
			close(done)
		}
	} else {
		close(done) // a load of this session follows the turn already
	}
	// Waiting ends with the turn, with a cancel of a steer, or with the
	// editor's connection (the turn goes on).
	res, err := a.rt.WaitTurn(pr.ctx, turnID)
	// The last events come just after the end; a turn that ended without
	// its last event (a failed start) is not waited on for long.
	if err == nil {
		select {
		case <-done:
		case <-time.After(3 * time.Second):
		}
	}
	stopFollowing()
	<-done
	switch {
	case a.isCancelled(pr) && a.base.Err() == nil:
		// ACP: a cancelled prompt answers "cancelled", however its turn
		// ended.
		return cancelled, nil
	case err != nil:
		return acp.PromptResponse{}, fmt.Errorf("turn %s: %w", turnID, err)
	}
	reason, err := stopReason(res)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	return acp.PromptResponse{StopReason: reason}, nil
}

// handOver hands the prompt's text and pictures to the session and returns the turn it
// became; an error when the editor cancelled before or while it waited
// for its turn. The hand-over itself goes on (the message is durable once
// taken) until the cancel withdrew the message or its turn started, which
// is then stopped.
func (a *Agent) handOver(id string, pr *prompt, text string, images []turnapi.Image) (string, error) {
	a.mu.Lock()
	if pr.cancelled {
		a.mu.Unlock()
		return "", errCancelled
	}
	pr.handing = true
	a.mu.Unlock()
	in := engine.TurnTemplate(a.cfg, a.cwd(id))
	in.SessionID, in.UserMessage, in.Images = id, text, images
	type handed struct {
		d   workflows.Delivery
		err error
	}
	out := make(chan handed, 1)
	go func() {
		d, err := a.rt.StartRequest(a.base, in, workflows.BusyMode(a.cfg.BusyInputMode), pr.request)
		if a.settle(pr, d, err) {
			a.stopTurn(id, d.TurnID) // cancelled while it waited
		}
		out <- handed{d, err}
	}()
	select {
	case h := <-out:
		return h.d.TurnID, h.err
	case <-pr.ctx.Done():
	}
	// Cancelled while it waited: the prompt answers once what it handed
	// over is withdrawn or its turn has stopped, so the editor's next
	// prompt never joins a turn still winding down.
	ctx, cancel := context.WithTimeout(a.base, cancelTimeout)
	defer cancel()
	select {
	case h := <-out:
		if h.err == nil && h.d.TurnID != "" && h.d.Outcome != workflows.DeliverySteered {
			_, _ = a.rt.WaitTurn(ctx, h.d.TurnID)
		}
	case <-ctx.Done():
	}
	return "", context.Cause(pr.ctx)
}

// errCancelled ends a prompt the editor cancelled.
var errCancelled = errors.New("cancelled by the editor")

// Cancel is the SDK's handler of session/cancel. The cancel acted when
// the guard passed it on (cancel), in the order the editor sent it: the
// SDK runs each request in its own goroutine and notifications in
// another, so a cancel handled here could overtake the prompt sent before
// it or stop the one sent after it.
func (a *Agent) Cancel(context.Context, acp.CancelNotification) error { return nil }

// cancel stops what the editor runs in the session, at once and only
// that: its prompt's turn; a prompt still on its way to its turn is
// withdrawn (it never runs; another sender's turn goes on); one that only
// steered another sender's turn stops waiting for it; a prompt sent and
// not yet begun is cancelled before it runs; without a prompt, the turn a
// load follows. The prompt answers "cancelled" once its turn has stopped
// and every tool call it began has ended (at once when it had none). What
// takes Temporal runs beside the connection's messages, not in their way.
// The caller holds a.mu.
func (a *Agent) cancel(id string) {
	c := a.prompts[id]
	onItsWay := c != nil && c.arrived > c.begun
	if onItsWay {
		c.cancelledUpTo = c.arrived
	}
	s, ok := a.sessions[id]
	if !ok || (s.prompt == nil && onItsWay) {
		return // nothing of this editor's runs there, or the prompt begins cancelled
	}
	pr, following := s.prompt, s.following
	var act func(context.Context)
	switch {
	case pr != nil && pr.cancelled:
	case pr != nil:
		pr.cancelled = true
		switch {
		case pr.handing:
			pr.stop()
			act = func(ctx context.Context) { a.withdraw(ctx, id, pr.request) }
		case pr.turn == "":
			// Not handed over (a slash command, or the hand-over not begun):
			// the prompt sees it.
		case pr.steered:
			pr.stop()
		default:
			turn := pr.turn
			act = func(context.Context) { a.stopTurn(id, turn) }
		}
	case following != "":
		// The turn this connection follows, and only it: by the time this
		// runs, the session may run another (the editor's next prompt).
		act = func(context.Context) { a.stopTurn(id, following) }
	}
	if act != nil {
		a.goFollowLocked(func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(a.base), cancelTimeout)
			defer cancel()
			act(ctx)
		})
	}
}

// withdraw withdraws a cancelled prompt's message (one call: the session
// refuses it should it arrive later); one whose turn started already is
// stopped.
func (a *Agent) withdraw(ctx context.Context, id, request string) {
	a.retry(ctx, "withdraw a cancelled prompt", id, func(ctx context.Context) error {
		d, err := a.rt.Withdraw(ctx, id, request)
		if err == nil && d.Outcome == workflows.DeliveryStarted && d.TurnID != "" {
			a.stopTurn(id, d.TurnID)
		}
		return err
	})
}

// stopTurn interrupts one turn of the session.
func (a *Agent) stopTurn(id, turnID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.base), cancelTimeout)
	defer cancel()
	a.retry(ctx, "cancel turn "+turnID, id, func(ctx context.Context) error {
		err := a.rt.Signal(ctx, turnID, workflows.SignalInterrupt, cancelReason)
		var gone *serviceerror.NotFound
		if errors.As(err, &gone) {
			return nil // it ended already
		}
		return err
	})
}

// retry calls f, a second apart, until it succeeds or ctx ends (said in
// one log line): Temporal may not answer for a while.
func (a *Agent) retry(ctx context.Context, what, id string, f func(context.Context) error) {
	for {
		err := f(ctx)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			a.logger.Warn("acp: "+what, "session", id, "error", err)
			return
		case <-time.After(time.Second):
		}
	}
}

// claim starts a session's prompt; a session the connection does not
// know, or one whose prompt runs, is refused. A prompt a cancel overtook
// on its way in starts cancelled.
func (a *Agent) claim(id string) (*prompt, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.prompts[id]
	if c == nil {
		c = &promptCount{}
		a.prompts[id] = c
	}
	c.begun++
	early := c.begun <= c.cancelledUpTo
	if c.begun >= c.arrived {
		delete(a.prompts, id) // none on its way: numbering starts again
	}
	s, ok := a.sessions[id]
	switch {
	case !ok:
		return nil, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown session %q: create it with session/new or open it with session/load", id)})
	case s.prompt != nil:
		return nil, acp.NewInvalidRequest(map[string]any{"error": fmt.Sprintf("session %q is already running a prompt: wait for its answer or cancel it", id)})
	}
	ctx, stop := context.WithCancelCause(a.base)
	pr := &prompt{request: "acp-" + engine.NewRequestID(), ctx: ctx, stop: func() { stop(errCancelled) }, cancelled: early}
	s.prompt = pr
	return pr, nil
}

// settle records what the hand-over of pr became; true when the editor
// cancelled the prompt meanwhile and its own turn started (to be stopped).
func (a *Agent) settle(pr *prompt, d workflows.Delivery, err error) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	pr.handing = false
	if err != nil {
		return false
	}
	pr.turn, pr.steered = d.TurnID, d.Outcome == workflows.DeliverySteered
	return pr.cancelled && !pr.steered && d.TurnID != ""
}

// isCancelled: the editor cancelled the prompt.
func (a *Agent) isCancelled(pr *prompt) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return pr.cancelled
}

// release ends the session's prompt.
func (a *Agent) release(id string, pr *prompt) {
	pr.stop()
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[id]; ok && s.prompt == pr {
		s.prompt = nil
	}
}

// cwd is the session's working directory.
func (a *Agent) cwd(id string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[id]; ok {
		return s.cwd
	}
	return ""
}

// sawLine is told of each message the guard passes on, before the SDK
// reads it, in the editor's order: a session/prompt the SDK will hand to
// Prompt is counted as arrived, and a session/cancel cancels what runs in
// its session and the prompts on their way in (arrived, not begun). A
// message the SDK would refuse (checked as it checks) counts for nothing.
func (a *Agent) sawLine(line []byte) {
	if !bytes.Contains(line, []byte("prompt")) && !bytes.Contains(line, []byte("cancel")) {
		return
	}
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	switch m.Method {
	case acp.AgentMethodSessionPrompt:
		var p acp.PromptRequest
		if json.Unmarshal(m.Params, &p) != nil || p.Validate() != nil {
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		c := a.prompts[string(p.SessionId)]
		if c == nil {
			c = &promptCount{}
			a.prompts[string(p.SessionId)] = c
		}
		c.arrived++
	case acp.AgentMethodSessionCancel:
		var p acp.CancelNotification
		if json.Unmarshal(m.Params, &p) != nil || p.Validate() != nil {
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		a.cancel(string(p.SessionId))
	}
}
