package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/textline"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// Bounds of what a status reads and keeps.
const (
	// eventsPage and maxEventPages bound the scan of a turn's live events
	// (the tool running now, the last notice).
	eventsPage    = 500
	maxEventPages = 100
	// noticeText bounds a notice's text.
	noticeText = 300
)

// ErrNoSession: the store holds no such session.
var ErrNoSession = errors.New("no such session")

// Status is what `talaria status SESSION` shows; its JSON keys are
// snake_case.
type Status struct {
	Session workflows.SessionState `json:"session"`
	// Turn is the running turn's progress (none when idle).
	Turn *workflows.Progress `json:"turn,omitempty"`
	// Waits are its steps between attempts or running for a while.
	Waits []ActivityWait `json:"waits,omitempty"`
	// Current is the model call or tool running now.
	Current *CurrentWork `json:"current,omitempty"`
	// LastNotice is the turn's last wait notice (a retry, a slow model).
	LastNotice *TurnNotice `json:"last_notice,omitempty"`
	// Goal is the progress of the goal or background task run in the
	// session (talaria run), when there is one.
	Goal *workflows.GoalProgress `json:"goal,omitempty"`
	// Tasks are the delegated tasks of the session running now.
	Tasks []TaskStatus `json:"tasks,omitempty"`
	// UI opens the session's turns in serve's Web UI. It carries the UI's
	// token, the owner's: talaria status adds it, SessionStatus (and so
	// the API) never does.
	UI string `json:"ui,omitempty"`
	// KeyPools are the session's model endpoints that have several keys,
	// each key ready or cooling down.
	KeyPools []KeyPoolStatus `json:"key_pools,omitempty"`
}

// CurrentWork is the step of a turn running now.
type CurrentWork struct {
	// What is "model call", "tool", "compaction" or the activity's name.
	What string `json:"what"`
	// Tool and Args name the tool running (tool only).
	Tool string `json:"tool,omitempty"`
	Args string `json:"args,omitempty"`
	// Attempt is the activity's attempt (0 for a quick tool batch run in
	// the workflow's worker); MaxAttempts is 0 when unbounded.
	Attempt     int32     `json:"attempt,omitempty"`
	MaxAttempts int32     `json:"max_attempts,omitempty"`
	StartedAt   time.Time `json:"started_at"`
	// RunningFor is how long it has run, e.g. "3m10s".
	RunningFor string `json:"running_for"`
}

// TurnNotice is a wait event of the turn: a retry's notice, a slow model.
type TurnNotice struct {
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// toolRun is a tool call that started and has not ended.
type toolRun struct {
	activities.ToolEvent
	At time.Time
}

// turnEvents is what status learns from a turn's live events.
type turnEvents struct {
	open   map[string]toolRun
	notice *TurnNotice
}

// add takes in one event, in order. Pure.
func (te *turnEvents) add(ev models.Event) {
	switch ev.Kind {
	case events.KindToolStart, events.KindToolEnd:
		var t activities.ToolEvent
		if json.Unmarshal([]byte(ev.Data), &t) != nil {
			return
		}
		if te.open == nil {
			te.open = map[string]toolRun{}
		}
		if ev.Kind == events.KindToolStart {
			te.open[t.ID] = toolRun{ToolEvent: t, At: ev.At}
		} else {
			delete(te.open, t.ID)
		}
	case events.KindWait:
		te.notice = &TurnNotice{Text: textline.Of(textline.Visible(ev.Data), noticeText), At: ev.At}
	}
}

// running is the tool started last among those still running. Pure.
func (te *turnEvents) running() *toolRun {
	var last *toolRun
	for _, r := range te.open {
		if last == nil || r.At.After(last.At) {
			last = &r
		}
	}
	return last
}

// scanTurnEvents reads a turn's live events (at most maxEventPages pages).
func scanTurnEvents(ctx context.Context, store *models.Store, turnID string) (turnEvents, error) {
	var te turnEvents
	var after int64
	for range maxEventPages {
		evs, err := store.EventsAfter(ctx, turnID, after, eventsPage)
		if err != nil {
			return te, fmt.Errorf("read the events of turn %s: %w", turnID, err)
		}
		for _, ev := range evs {
			te.add(ev)
		}
		if len(evs) < eventsPage {
			break
		}
		after = evs[len(evs)-1].ID
	}
	return te, nil
}

// describeCurrent is the step running now: the started activity Temporal
// reports (a tool batch named by the tool running in it), or a quick tool
// batch that runs without one. Nothing while the turn waits for a person:
// status shows what it waits for instead. Pure.
func describeCurrent(p *workflows.Progress, pending []*workflowpb.PendingActivityInfo, tool *toolRun, now time.Time) *CurrentWork {
	if p == nil || p.PendingApproval != nil || p.PendingQuestion != nil {
		return nil
	}
	for _, a := range pending {
		started := a.GetLastStartedTime()
		if a.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED || started == nil {
			continue
		}
		name := a.GetActivityType().GetName()
		c := &CurrentWork{What: activityLabel(name), Attempt: a.GetAttempt(), MaxAttempts: a.GetMaximumAttempts(), StartedAt: started.AsTime()}
		if f := a.GetLastFailure(); f != nil && a.GetAttempt() > 1 {
			c.MaxAttempts = classLimit(c.MaxAttempts, f.GetApplicationFailureInfo().GetType())
		}
		if name == turnapi.ExecuteToolsName {
			c.What, c.Tool = "tool", p.CurrentTool
			if tool != nil {
				c.Tool, c.Args = tool.Name, tool.Args
				if tool.At.After(c.StartedAt) {
					c.StartedAt = tool.At
				}
			}
		}
		c.RunningFor = now.Sub(c.StartedAt).Round(time.Second).String()
		return c
	}
	if tool != nil && p.CurrentTool != "" {
		return &CurrentWork{What: "tool", Tool: tool.Name, Args: tool.Args, StartedAt: tool.At,
			RunningFor: now.Sub(tool.At).Round(time.Second).String()}
	}
	return nil
}

// SessionStatus is what session id is doing now: its coordinator's state
// and, for a running turn, its progress, Temporal's view of its activities
// and its live events; its goal, its delegated tasks and its key pools. Only the coordinator's state is required: ErrNoSession
// when neither Temporal nor the store knows the session.
func (rt *Runtime) SessionStatus(ctx context.Context, id string) (Status, error) {
	var r Status
	st, err := rt.SessionState(ctx, id)
	if IsNotFound(err) {
		if !rt.sessionKnown(ctx, id) {
			return r, fmt.Errorf("%w: %q", ErrNoSession, id)
		}
		st, err = workflows.SessionState{SessionID: id, Queued: []string{}}, nil
	}
	if err != nil {
		return r, err
	}
	now := time.Now()
	r.Session = st
	models := rt.Models // serve's, as config.yaml last set it
	if models == nil {
		models = NewModelConfig(rt.Config)
	}
	r.KeyPools = keyPools(ctx, models, rt.Store, id, now)
	running := st.Running
	if g, err := rt.GoalProgress(ctx, id); err == nil {
		r.Goal = &g
		running = cmp.Or(running, g.Running)
	}
	if running == "" {
		return r, nil
	}
	p, err := rt.Progress(ctx, running)
	if err != nil {
		return r, nil // the turn ended meanwhile: idle
	}
	r.Turn = &p
	pending, _ := pendingActivities(ctx, rt.Client, running)
	r.Waits = describeWaits(pending, now)
	var te turnEvents
	if rt.Store != nil {
		te, _ = scanTurnEvents(ctx, rt.Store, running)
		r.Tasks = runningTasks(ctx, rt, p.ActiveSessionID, id)
	}
	r.Current = describeCurrent(&p, pending, te.running(), now)
	r.LastNotice = te.notice
	return r, nil
}

// sessionKnown reports whether the store holds the session (true when the
// store cannot tell: a session is only called unknown when it surely is).
func (rt *Runtime) sessionKnown(ctx context.Context, id string) bool {
	if rt.Store == nil {
		return true
	}
	_, err := rt.Store.Session(ctx, id)
	return !errors.Is(err, models.ErrNotFound)
}

// IsNotFound reports a workflow that does not exist (a session never used).
func IsNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return err != nil && errors.As(err, &nf)
}

// TaskStatus is a delegated task running now.
type TaskStatus struct {
	Session   string `json:"session"`
	TurnID    string `json:"turn_id"`
	Iteration int    `json:"iteration"`
	APICalls  int    `json:"api_calls"`
	// Tool is the tool it runs now ("" between tools).
	Tool string `json:"tool,omitempty"`
	// Approval is the command it waits to have approved.
	Approval string `json:"approval,omitempty"`
}

// runningTasks are the tasks delegated from the sessions named (a turn's
// session and the one the user named) whose turn runs now.
func runningTasks(ctx context.Context, rt *Runtime, sessions ...string) []TaskStatus {
	var out []TaskStatus
	for _, t := range rt.RunningTasks(ctx, sessions...) {
		ts := TaskStatus{Session: t.Session, TurnID: t.TurnID, Iteration: t.Iteration, APICalls: t.APICalls, Tool: t.CurrentTool}
		if t.PendingApproval != nil {
			ts.Approval = t.PendingApproval.Command
		}
		out = append(out, ts)
	}
	return out
}
