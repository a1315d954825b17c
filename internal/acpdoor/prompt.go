package acpdoor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/workflows"
)

// prompt is one session/prompt while it runs. The hand-over names the
// message (request), so that a cancel can take it back out of the
// session's queue; turn is the turn it became, steered when that turn is
// another sender's running turn the prompt only steered (a cancel leaves
// it running). stop ends the prompt's waiting at once (a cancel before
// its turn or of a steer). Its fields are guarded by Agent.mu.
type prompt struct {
	request   string
	handing   bool
	turn      string
	steered   bool
	cancelled bool
	ctx       context.Context
	stop      context.CancelFunc
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
	text := promptText(p.Prompt)
	if text == "" {
		return acp.PromptResponse{}, acp.NewInvalidParams(map[string]any{"error": "the prompt has no text"})
	}
	if name, args, ok := parseCommand(text); ok {
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
	turnID, err := a.handOver(id, pr, text)
	switch {
	case a.isCancelled(pr):
		return cancelled, nil
	case err != nil:
		return acp.PromptResponse{}, fmt.Errorf("hand the prompt to session %s: %w", id, err)
	}
	fctx, stopFollowing := context.WithCancel(a.base)
	done := make(chan struct{})
	if a.claimFollow(id, turnID) {
		if !a.goFollow(func() {
			defer close(done)
			a.follow(fctx, id, turnID, true)
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

// handOver hands the prompt's text to the session and returns the turn it
// became, or an error once the editor cancelled while it waited for its
// turn: the hand-over itself goes on (the message is durable once taken)
// until the cancel took the message back or its turn started, which is
// then stopped.
func (a *Agent) handOver(id string, pr *prompt, text string) (string, error) {
	in := engine.TurnTemplate(a.cfg, a.cwd(id))
	in.SessionID, in.UserMessage = id, text
	type handed struct {
		d   workflows.Delivery
		err error
	}
	out := make(chan handed, 1)
	go func() {
		d, err := a.rt.StartRequest(a.base, in, workflows.BusyMode(a.cfg.BusyInputMode), pr.request)
		if err == nil && a.settle(pr, d) && d.Outcome != workflows.DeliverySteered {
			a.stopTurn(id, d.TurnID) // cancelled while it waited
		}
		out <- handed{d, err}
	}()
	select {
	case h := <-out:
		return h.d.TurnID, h.err
	case <-pr.ctx.Done():
		return "", context.Cause(pr.ctx)
	}
}

// Cancel stops what the editor runs in the session, at once and only
// that: its prompt's turn; a prompt still waiting behind another sender's
// turn is taken out of the queue (the other turn goes on), one that only
// steered another sender's turn stops waiting for it; without a prompt,
// the turn a load follows. A prompt on its way in is cancelled before it
// runs. The prompt answers "cancelled" once its turn has stopped and
// every tool call it began has ended. What takes Temporal runs beside the
// connection's notifications, not in their way.
func (a *Agent) Cancel(_ context.Context, p acp.CancelNotification) error {
	id := string(p.SessionId)
	a.mu.Lock()
	s, ok := a.sessions[id]
	if !ok {
		a.mu.Unlock()
		return nil // nothing of this editor's runs there
	}
	if s.arrived > s.begun {
		s.cancelledUpTo = s.arrived
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
			act = func(ctx context.Context) { a.withdraw(ctx, id, pr) }
		case pr.steered:
			pr.stop()
		default:
			turn := pr.turn
			act = func(context.Context) { a.stopTurn(id, turn) }
		}
	case following != "":
		act = func(ctx context.Context) {
			_, err := a.rt.Interrupt(ctx, id, cancelReason)
			if err != nil && !errors.Is(err, engine.ErrNoRunningTurn) {
				a.logger.Warn("acp: cancel", "session", id, "error", err)
			}
		}
	}
	a.mu.Unlock()
	if act != nil {
		a.goFollow(func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(a.base), cancelTimeout)
			defer cancel()
			act(ctx)
		})
	}
	return nil
}

// withdraw takes a cancelled prompt's message back out of the session's
// queue. A message not there yet (its hand-over still on its way) is
// asked for again until the hand-over ends; one that started is stopped
// by the hand-over itself (settle).
func (a *Agent) withdraw(ctx context.Context, id string, pr *prompt) {
	for {
		d, err := a.rt.Withdraw(ctx, id, pr.request)
		if err == nil && d.Outcome != workflows.DeliveryUnknown {
			return // withdrawn, or its turn started and the hand-over stops it
		}
		a.mu.Lock()
		handing := pr.handing
		a.mu.Unlock()
		if !handing {
			return
		}
		select {
		case <-ctx.Done():
			a.logger.Warn("acp: take a cancelled prompt back", "session", id, "error", errors.Join(err, ctx.Err()))
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stopTurn interrupts one turn of the session, trying again while
// Temporal does not answer.
func (a *Agent) stopTurn(id, turnID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.base), cancelTimeout)
	defer cancel()
	for {
		err := a.rt.Signal(ctx, turnID, workflows.SignalInterrupt, cancelReason)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			a.logger.Warn("acp: cancel", "session", id, "turn", turnID, "error", err)
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
	s, ok := a.sessions[id]
	if ok {
		s.begun++
	}
	switch {
	case !ok:
		return nil, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown session %q: create it with session/new or open it with session/load", id)})
	case s.prompt != nil:
		return nil, acp.NewInvalidRequest(map[string]any{"error": fmt.Sprintf("session %q is already running a prompt: wait for its answer or cancel it", id)})
	}
	ctx, stop := context.WithCancelCause(a.base)
	pr := &prompt{request: "acp-" + engine.NewRequestID(), handing: true, ctx: ctx,
		stop: func() { stop(errors.New("cancelled by the editor")) }, cancelled: s.begun <= s.cancelledUpTo}
	s.prompt = pr
	return pr, nil
}

// settle records what the hand-over of pr became; true when the editor
// cancelled the prompt meanwhile.
func (a *Agent) settle(pr *prompt, d workflows.Delivery) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	pr.handing, pr.turn, pr.steered = false, d.TurnID, d.Outcome == workflows.DeliverySteered
	return pr.cancelled
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

// sawLine counts a session/prompt the editor sent, as the guard passes it
// on (before the SDK reads it): a cancel that follows it knows it is on
// its way.
func (a *Agent) sawLine(line []byte) {
	if !bytes.Contains(line, []byte(`"session/prompt"`)) {
		return
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != acp.AgentMethodSessionPrompt {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[m.Params.SessionID]; ok {
		s.arrived++
	}
}
