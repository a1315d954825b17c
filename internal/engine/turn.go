package engine

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/transcript"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// ErrNoRunningTurn means the session has no turn running.
var ErrNoRunningTurn = errors.New("no turn is running in this session")

// Conversation maps a session id to its conversation: the first session
// of its line of compactions. Compaction continues a session in child
// sessions (root~1, ...); whichever of them a user names, the conversation
// has one coordinator, one turn numbering and one set of approvals, all
// under that first session's id. The walk follows parent links, so a child
// whose parent was deleted is a conversation of its own. An id the store
// does not know is its own conversation.
func (rt *Runtime) Conversation(ctx context.Context, sessionID string) (string, error) {
	id, known := sessionID, sessionID
	for range maxParentWalk {
		sess, err := rt.Store.Session(ctx, id)
		if errors.Is(err, models.ErrNotFound) {
			return known, nil // an unknown id, or a dangling parent link
		}
		if err != nil {
			return "", fmt.Errorf("find the conversation of session %s: %w", sessionID, err)
		}
		if known = id; sess.ParentSessionID == "" {
			return id, nil
		}
		id = sess.ParentSessionID
	}
	return known, nil
}

// maxParentWalk bounds Conversation's walk up a lineage.
const maxParentWalk = 1000

// Send delivers a message to its session's coordinator, starting it when
// needed. The message is durable from here on: it will run, be queued,
// interrupt or steer as its mode says.
func (rt *Runtime) Send(ctx context.Context, sessionID string, msg workflows.Message) error {
	conversation, err := rt.Conversation(ctx, sessionID)
	if err != nil {
		return err
	}
	return rt.send(ctx, conversation, msg)
}

// send delivers msg to the coordinator of a conversation (a resolved id)
// and returns once the coordinator has accepted it (it is durable).
func (rt *Runtime) send(ctx context.Context, sessionID string, msg workflows.Message) error {
	if msg.RequestID == "" {
		msg.RequestID = NewRequestID() // as deliver would, so that the log line names it
	}
	_, err := rt.deliver(ctx, sessionID, msg, client.WorkflowUpdateStageAccepted)
	if err == nil {
		rt.logHandoff(ctx, sessionID, msg, "")
	}
	return err
}

// logHandoff says in one line that the session took msg: its request,
// mode and size (never its text) and, once known, the turn it became.
func (rt *Runtime) logHandoff(ctx context.Context, sessionID string, msg workflows.Message, turnID string) {
	attrs := []any{"session", sessionID, "request", msg.RequestID, "mode", string(msg.Mode), "chars", len(msg.Text)}
	if turnID != "" {
		attrs = append(attrs, "turn", turnID)
	}
	rt.logger.InfoContext(ctx, "message handed to the session", attrs...)
}

// RunTurn sends in.UserMessage to the session, queued behind any running
// turn, and waits for the turn it becomes.
func (rt *Runtime) RunTurn(ctx context.Context, in workflows.TurnInput) (workflows.ConversationResult, error) {
	return rt.RunMessage(ctx, in, workflows.BusyQueue, nil)
}

// StartMessage sends in.UserMessage to its session with a busy-input mode
// and returns the turn it became (for a steer: the running turn it joined)
// once that turn has started; a queued message waits for its turn first.
// The message is durable once sent: the turn runs whatever the caller does
// next.
func (rt *Runtime) StartMessage(ctx context.Context, in workflows.TurnInput, mode workflows.BusyMode) (string, error) {
	d, err := rt.StartRequest(ctx, in, mode, NewRequestID())
	return d.TurnID, err
}

// Deliver hands msg to its session (msg.Turn.SessionID) and returns the
// turn it became, once started. The caller sets msg.RequestID from what
// identifies the message where it came from (a chat update), so that a
// retried delivery is one message.
func (rt *Runtime) Deliver(ctx context.Context, msg workflows.Message) (string, error) {
	if msg.RequestID == "" {
		return "", errors.New("deliver: the message has no request id")
	}
	conversation, err := rt.Conversation(ctx, msg.Turn.SessionID)
	if err != nil {
		return "", err
	}
	msg.Turn.SessionID = conversation
	d, err := rt.handoff(ctx, conversation, msg)
	if err == nil {
		rt.logHandoff(ctx, conversation, msg, d.TurnID)
	}
	return d.TurnID, err
}

// Submit hands msg to the coordinator of its conversation and returns
// once the message is durable, without waiting for its turn: a sender that
// asks to be told (msg.Notify) is a workflow, which the coordinator
// signals when the turn starts and ends.
func (rt *Runtime) Submit(ctx context.Context, msg workflows.Message) error {
	if msg.RequestID == "" {
		return errors.New("submit: the message has no request id")
	}
	conversation, err := rt.Conversation(ctx, msg.Turn.SessionID)
	if err != nil {
		return err
	}
	msg.Turn.SessionID = conversation
	_, err = rt.deliver(ctx, conversation, msg, client.WorkflowUpdateStageAccepted)
	return err
}

// StartRequest is StartMessage for a message its caller names
// (requestID, unique to it), so that it can withdraw the message while it
// waits in the queue (Withdraw). The Delivery says whether the message
// started its turn or steered the running one (its TurnID is then another
// sender's turn).
func (rt *Runtime) StartRequest(ctx context.Context, in workflows.TurnInput, mode workflows.BusyMode, requestID string) (workflows.Delivery, error) {
	conversation, err := rt.Conversation(ctx, in.SessionID)
	if err != nil {
		return workflows.Delivery{}, err
	}
	in.SessionID = conversation
	return rt.startRequest(ctx, in, mode, requestID)
}

// startRequest is StartRequest for a resolved conversation id.
func (rt *Runtime) startRequest(ctx context.Context, in workflows.TurnInput, mode workflows.BusyMode, requestID string) (workflows.Delivery, error) {
	msg := workflows.Message{RequestID: requestID, Text: in.UserMessage, Mode: mode, Turn: in}
	d, err := rt.handoff(ctx, in.SessionID, msg)
	if err == nil {
		rt.logHandoff(ctx, in.SessionID, msg, d.TurnID)
	}
	return d, err
}

// RunMessage sends in.UserMessage with a busy-input mode and waits for the
// turn it becomes (for a steer: the running turn it joined), then fills the
// session's messages from the store. While Temporal is unreachable (e.g. a
// restarting serve) it keeps waiting until ctx ends: the turn is durable.
// onEvent, when set, receives the turn's live events (streamed text, tool
// starts and ends) as they happen, all of them before RunMessage returns.
func (rt *Runtime) RunMessage(ctx context.Context, in workflows.TurnInput, mode workflows.BusyMode, onEvent func(models.Event)) (workflows.ConversationResult, error) {
	var res workflows.ConversationResult
	conversation, err := rt.Conversation(ctx, in.SessionID)
	if err != nil {
		return res, err
	}
	in.SessionID = conversation
	// Say so when the server stops answering while this waits.
	ctx, unwatch := rt.watchServer(ctx)
	defer unwatch()
	d, err := rt.startRequest(ctx, in, mode, NewRequestID())
	if err != nil {
		return res, err
	}
	turnID := d.TurnID
	following := rt.follow(ctx, turnID, onEvent)
	res, err = rt.WaitTurn(ctx, turnID)
	following()
	if err != nil {
		return res, err
	}
	return res, rt.FillMessages(ctx, &res)
}

// follow delivers a turn's live events to onEvent until the turn's last
// event; the returned func waits for that (briefly: events are best effort).
func (rt *Runtime) follow(ctx context.Context, turnID string, onEvent func(models.Event)) (wait func()) {
	if onEvent == nil {
		return func() {}
	}
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range events.Tail(fctx, rt.Store, turnID, 0, 50*time.Millisecond) {
			onEvent(ev)
		}
	}()
	return func() {
		select {
		case <-done:
		case <-time.After(3 * time.Second):
		}
		cancel()
		<-done
	}
}

// SessionState asks a session's coordinator what runs and what waits.
func (rt *Runtime) SessionState(ctx context.Context, sessionID string) (workflows.SessionState, error) {
	conversation, err := rt.Conversation(ctx, sessionID)
	if err != nil {
		return workflows.SessionState{}, err
	}
	return rt.sessionState(ctx, conversation)
}

// sessionState queries the coordinator of a conversation (a resolved id).
func (rt *Runtime) sessionState(ctx context.Context, sessionID string) (workflows.SessionState, error) {
	var st workflows.SessionState
	v, err := rt.Client.QueryWorkflow(ctx, workflows.SessionWorkflowID(sessionID), "", workflows.QuerySession)
	if err != nil {
		return st, fmt.Errorf("query session %s: %w", sessionID, err)
	}
	if err := v.Get(&st); err != nil {
		return st, fmt.Errorf("decode session %s state: %w", sessionID, err)
	}
	return st, nil
}

// Progress asks a running turn for its live state.
func (rt *Runtime) Progress(ctx context.Context, turnID string) (workflows.Progress, error) {
	var p workflows.Progress
	v, err := rt.Client.QueryWorkflow(ctx, turnID, "", workflows.QueryProgress)
	if err != nil {
		return p, fmt.Errorf("query turn %s: %w", turnID, err)
	}
	if err := v.Get(&p); err != nil {
		return p, fmt.Errorf("decode turn %s progress: %w", turnID, err)
	}
	return p, nil
}

// Interrupt stops the session's running turn and returns its id.
func (rt *Runtime) Interrupt(ctx context.Context, sessionID, reason string) (string, error) {
	// A goal running in the session is stopped whole (it interrupts its
	// running turn itself), not only its turn.
	if id, gerr := rt.interruptGoal(ctx, sessionID, reason); gerr == nil {
		return id, nil
	}
	st, err := rt.SessionState(ctx, sessionID)
	if err != nil {
		return "", err
	}
	if st.Running == "" {
		return "", ErrNoRunningTurn
	}
	if err := rt.Client.SignalWorkflow(ctx, st.Running, "", workflows.SignalInterrupt, reason); err != nil {
		return "", fmt.Errorf("interrupt %s: %w", st.Running, err)
	}
	return st.Running, nil
}

// WaitTurn waits for a turn's result, riding out server restarts (a client
// says once when its server stops answering, and when it is back). A final
// answer the workflow carried only as a preview is filled in full from the
// store.
func (rt *Runtime) WaitTurn(ctx context.Context, workflowID string) (workflows.ConversationResult, error) {
	ctx, unwatch := rt.watchServer(ctx)
	defer unwatch()
	for {
		var res workflows.ConversationResult
		err := rt.Client.GetWorkflow(ctx, workflowID, "").Get(ctx, &res)
		if err == nil {
			return res, rt.FillFinal(ctx, &res)
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if isFinal(err) {
			return res, fmt.Errorf("turn %s: %w", workflowID, err)
		}
		// watchServer says once that the server stopped answering.
		rt.logger.Debug("waiting for the turn; temporal not reachable, retrying", "turn", workflowID, "error", err)
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// isFinal tells a failed workflow from a transient connection problem.
func isFinal(err error) bool {
	var wfErr *temporal.WorkflowExecutionError
	var canceled *temporal.CanceledError
	var timeout *temporal.TimeoutError
	var terminated *temporal.TerminatedError
	var notFound *serviceerror.NotFound
	return errors.As(err, &notFound) || errors.As(err, &wfErr) || errors.As(err, &canceled) || errors.As(err, &timeout) || errors.As(err, &terminated)
}

// FillFinal replaces a clipped final answer (res.FinalClipped) with the full
// text of its stored message.
func (rt *Runtime) FillFinal(ctx context.Context, res *workflows.ConversationResult) error {
	if !res.FinalClipped || res.FinalMessageID == 0 {
		return nil
	}
	m, err := rt.Store.Message(ctx, res.FinalMessageID)
	if err != nil {
		return fmt.Errorf("load the final answer of %s: %w", res.TurnID, err)
	}
	text := activities.FinalText(m)
	res.FinalResponse, res.FinalClipped = &text, false
	return nil
}

// FillMessages loads the session's messages in OpenAI format into res.
func (rt *Runtime) FillMessages(ctx context.Context, res *workflows.ConversationResult) error {
	id := cmp.Or(res.ActiveSessionID, res.SessionID)
	msgs, err := rt.Store.Messages(ctx, id)
	if err != nil {
		return fmt.Errorf("load messages of session %s: %w", id, err)
	}
	res.Messages = transcript.ToMessages(msgs)
	return nil
}

// NewRequestID is a fresh, random request id for a message (see
// StartRequest).
func NewRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Running returns the session's running turn and its progress;
// ErrNoRunningTurn when nothing runs.
func (rt *Runtime) Running(ctx context.Context, sessionID string) (workflows.Progress, error) {
	st, err := rt.SessionState(ctx, sessionID)
	if err != nil {
		return workflows.Progress{}, err
	}
	if st.Running == "" {
		return workflows.Progress{}, ErrNoRunningTurn
	}
	return rt.Progress(ctx, st.Running)
}

// Decide gives a person's choice on the command turn turnID waits to have
// approved (callID names the call, so a choice never lands on another).
func (rt *Runtime) Decide(ctx context.Context, turnID, callID string, choice turnapi.ApprovalChoice) error {
	return rt.Signal(ctx, turnID, workflows.SignalApproval, workflows.ApprovalDecision{CallID: callID, Choice: choice})
}

// Answer gives a person's answer to the question turn turnID asked
// (callID names the call).
func (rt *Runtime) Answer(ctx context.Context, turnID, callID, text string) error {
	return rt.Signal(ctx, turnID, workflows.SignalAnswer, workflows.Answer{CallID: callID, Text: text})
}

// Signal sends a control signal to a turn.
func (rt *Runtime) Signal(ctx context.Context, turnID, name string, payload any) error {
	if err := rt.Client.SignalWorkflow(ctx, turnID, "", name, payload); err != nil {
		return fmt.Errorf("signal %s to %s: %w", name, turnID, err)
	}
	return nil
}
