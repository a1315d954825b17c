package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// TestMessageArrivingWithIdleTimer: the coordinator's idle timer fires
// while no worker polls (a laptop asleep, serve restarting) and a message
// arrives by Update-with-Start before a worker comes back, so the next
// workflow task carries both the timer and the update. The message must
// still get its turn: the coordinator may not wait for the update's
// handler while that handler waits for the coordinator to start the turn.
func TestMessageArrivingWithIdleTimer(t *testing.T) {
	t.Parallel()
	model := fakellm.New(answerEvery(0))
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const session, idle = "idle-race", 4 * time.Second
	id := workflows.SessionWorkflowID(session)
	if _, err := rt.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue},
		workflows.SessionWorkflowName, workflows.SessionInput{SessionID: session, Idle: idle}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	turn := func(text string) workflows.TurnInput {
		return workflows.TurnInput{SessionID: session, UserMessage: text, Model: fakellm.DefaultModel, Workdir: dir}
	}
	if _, err := rt.RunMessage(ctx, turn("first"), workflows.BusyQueue, nil); err != nil {
		t.Fatalf("first message: %v", err)
	}
	waitIdleTimer(ctx, t, rt, id)
	rt.Worker.Stop()
	rt.Worker = nil
	waitIdleTimerFired(ctx, t, rt, id) // nobody takes the task

	type outcome struct {
		res workflows.ConversationResult
		err error
	}
	out := make(chan outcome, 1)
	sendCtx, sendCancel := context.WithTimeout(ctx, 45*time.Second)
	defer sendCancel()
	go func() {
		res, err := rt.RunMessage(sendCtx, turn("second"), workflows.BusyQueue, nil)
		out <- outcome{res, err}
	}()
	// The update reaches the server. An admitted update is not in the
	// history before a worker accepts it, and its id is the engine's own,
	// so there is no state to wait on: the history check below tells
	// whether the case was set up.
	time.Sleep(2 * time.Second)
	if err := rt.startWorker(nil); err != nil {
		t.Fatal(err)
	}
	o := <-out
	if !timerAndUpdateInOneTask(ctx, t, rt, id) {
		t.Fatal("the idle timer and the update were not handled in one workflow task: the test did not set up its case")
	}
	if o.err != nil {
		t.Fatalf("the message sent as the idle timer fired never got its turn: %v", o.err)
	}
	if !o.res.Completed || o.res.TurnID != workflows.TurnWorkflowID(session, 2) {
		t.Fatalf("second message: %+v, want turn 2 completed", o.res)
	}
	// The coordinator then waits idle again and ends.
	if err := rt.Client.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		t.Fatalf("the coordinator did not end after its idle wait: %v", err)
	}
	// The run has change idle-queue: by its own marker, or by the epoch
	// marker that stands for it (workflows/versions.go).
	if h := history(ctx, t, rt, id); !hasVersionMarker(h, "idle-queue") && !hasVersionMarker(h, "epoch") {
		t.Error("the run went on without recording the idle-queue version (or the epoch)")
	}
	if os.Getenv("TALARIA_RECORD_HISTORIES") != "" {
		if _, err := os.Stat(filepath.Join("..", "..", "workflows", "testdata", idleQueueHistory)); err != nil {
			record(t, rt, id, idleQueueHistory)
		}
	}
}

// idleQueueHistory is the recorded history of this test's coordinator
// (replayed by workflows/replay_test.go).
const idleQueueHistory = "session_idle_queue.json"

// hasVersionMarker reports whether events record a GetVersion of change.
// Pure.
func hasVersionMarker(events []*historypb.HistoryEvent, change string) bool {
	for _, ev := range events {
		m := ev.GetMarkerRecordedEventAttributes()
		if m == nil || m.GetMarkerName() != "Version" {
			continue
		}
		for _, p := range m.GetDetails()["change-id"].GetPayloads() {
			if strings.Contains(string(p.GetData()), change) {
				return true
			}
		}
	}
	return false
}

// waitIdleTimer waits until the coordinator waits idle: a timer started
// and neither fired nor cancelled.
func waitIdleTimer(ctx context.Context, t *testing.T, rt *Runtime, id string) {
	t.Helper()
	for {
		open := 0
		for _, ev := range history(ctx, t, rt, id) {
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_TIMER_STARTED:
				open++
			case enumspb.EVENT_TYPE_TIMER_FIRED, enumspb.EVENT_TYPE_TIMER_CANCELED:
				open--
			}
		}
		if open > 0 {
			return
		}
		if ctx.Err() != nil {
			t.Fatal("the coordinator never waited idle")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitIdleTimerFired waits until the coordinator's idle timer has fired
// (the server records it without a worker).
func waitIdleTimerFired(ctx context.Context, t *testing.T, rt *Runtime, id string) {
	t.Helper()
	for {
		for _, ev := range history(ctx, t, rt, id) {
			if ev.GetEventType() == enumspb.EVENT_TYPE_TIMER_FIRED {
				return
			}
		}
		if ctx.Err() != nil {
			t.Fatal("the coordinator's idle timer never fired")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// history is a workflow's events.
func history(ctx context.Context, t *testing.T, rt *Runtime, id string) []*historypb.HistoryEvent {
	t.Helper()
	var events []*historypb.HistoryEvent
	iter := rt.Client.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	return events
}

// timerAndUpdateInOneTask reports whether the first workflow task after
// the idle timer fired accepted an update (both in one task).
func timerAndUpdateInOneTask(ctx context.Context, t *testing.T, rt *Runtime, id string) bool {
	t.Helper()
	events := history(ctx, t, rt, id)
	return timerThenUpdate(events)
}

// timerThenUpdate: after the first TimerFired (the idle timer; the one
// of the first wait was cancelled by the first message), the next
// completed workflow task is followed by an accepted update. Pure.
func timerThenUpdate(events []*historypb.HistoryEvent) bool {
	fired := -1
	for i, ev := range events {
		if ev.GetEventType() == enumspb.EVENT_TYPE_TIMER_FIRED {
			fired = i
			break
		}
	}
	if fired < 0 {
		return false
	}
	for i := fired + 1; i < len(events); i++ {
		if events[i].GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			return i+1 < len(events) && events[i+1].GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
		}
	}
	return false
}
