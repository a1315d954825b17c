package sessionview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

func TestTurnCount(t *testing.T) {
	turns := func(numbers ...int) []models.Turn {
		var out []models.Turn
		for _, n := range numbers {
			out = append(out, models.Turn{Number: n})
		}
		return out
	}
	for _, c := range []struct {
		name    string
		counted int
		turns   []models.Turn
		want    int
	}{
		{"no turns", 0, nil, 0},
		{"reserved turns", 3, turns(1, 2, 3), 3},
		{"a reserved turn not begun yet", 3, turns(1, 2), 3},
		{"a goal's turns, row written before they were counted", 0, turns(1, 2), 2},
		{"a cron job's turn, row written before", 0, turns(1), 1},
		{"a compacted session's turns go on numbering", 10, turns(11, 12), 12},
		{"a goal then chat turns numbered again from 1", 1, turns(1, 1, 2), 3},
	} {
		s := models.Session{TurnCount: c.counted}
		if got := TurnCount(s, c.turns); got != c.want {
			t.Errorf("%s: TurnCount = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestToolOutcome reads the results the engine itself writes.
func TestToolOutcome(t *testing.T) {
	reg, err := tools.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	unknownTool := reg.Call(context.Background(), tools.Env{}, tools.Call{ID: "c1", Name: "nosuchtool", Arguments: "{}"})
	cancelled, stop := context.WithCancel(context.Background())
	stop()
	notStarted := reg.Call(cancelled, tools.Env{}, tools.Call{ID: "c2", Name: "nosuchtool", Arguments: "{}"})
	killed := tools.Result{Content: `{"error": "cancelled: terminal was interrupted while it ran: context canceled"}`, IsError: true, Cancelled: true}
	blocked := turnapi.DenialMessage(turnapi.Assessment{Risk: turnapi.RiskBlocked, Reason: "wipes the disk"}, false)
	for _, c := range []struct {
		name, content, want string
	}{
		{"a command's output", `{"output":"hi\n","exit_code":0}`, OutcomeDone},
		{"plain text", "file written", OutcomeDone},
		{"an error mentioned in the output", `{"output":"Error: none","exit_code":0}`, OutcomeDone},
		{"a tool's error", unknownTool.Content, OutcomeFailed},
		{"a tool's error with a guardrail warning", unknownTool.Content + "\n\n[guardrail warning] same call again", OutcomeFailed},
		{"an engine error", activities.InvalidArgumentsMessage("terminal", "{"), OutcomeFailed},
		{"killed while it ran", activities.ExplainCancelled(killed, context.Canceled).Content, OutcomeStopped},
		{"cancelled before it started", activities.ExplainCancelled(notStarted, context.Canceled).Content, OutcomeStopped},
		{"out of time while it ran", activities.ExplainCancelled(killed, context.DeadlineExceeded).Content, OutcomeStopped},
		{"answered after an interrupt, not started", activities.UnansweredCall(false, false, true, ""), OutcomeStopped},
		{"answered after an interrupt, started", activities.UnansweredCall(true, false, true, ""), OutcomeStopped},
		{"answered after an interrupt, idempotent", activities.UnansweredCall(true, true, true, ""), OutcomeStopped},
		{"blocked", blocked, OutcomeNotRun},
		{"denied", turnapi.DenialMessage(turnapi.Assessment{Reason: "deletes"}, true), OutcomeNotRun},
		{"not approved", turnapi.DenialMessage(turnapi.Assessment{Reason: "deletes"}, false), OutcomeNotRun},
		{"skipped after a halt", turnapi.SkippedAfterHalt, OutcomeNotRun},
		{"outcome unknown", activities.OutcomeUnknown, OutcomeUnknown},
	} {
		if got := ToolOutcome(c.content); got != c.want {
			t.Errorf("%s: ToolOutcome(%q) = %q, want %q", c.name, c.content, got, c.want)
		}
	}
	if !notStarted.Cancelled || !notStarted.NotStarted {
		t.Fatalf("a call on a cancelled context: %+v", notStarted)
	}
}

// TestTurnCountsFromTheStore: sessions whose rows count no turns (written
// before goal, cron and sub-agent turns were counted) show the turns the
// store holds, in the list, the detail and the messages' outcomes.
func TestTurnCountsFromTheStore(t *testing.T) {
	ctx := context.Background()
	st, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	for id, n := range map[string]int{"goal-a": 3, "cron-nightly-1": 1, "task-b": 1, "empty": 0} {
		if _, err := st.EnsureSession(ctx, id, "m"); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= n; i++ {
			if err := st.UpsertTurn(ctx, models.Turn{ID: fmt.Sprintf("turn/%s/%d", id, i), SessionID: id, Number: i, Status: "completed", StartedAt: now}); err != nil {
				t.Fatal(err)
			}
		}
	}
	sessions, err := st.SessionPage(ctx, 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	counted, err := WithTurnCounts(ctx, st, sessions)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, s := range NewSessions(counted, func(string) string { return "" }) {
		got[s.ID] = s.TurnCount
	}
	want := map[string]int{"goal-a": 3, "cron-nightly-1": 1, "task-b": 1, "empty": 0}
	for id, n := range want {
		if got[id] != n {
			t.Errorf("session %s counts %d turns, want %d (all: %v)", id, got[id], n, got)
		}
	}
	sess, err := st.Session(ctx, "goal-a")
	if err != nil {
		t.Fatal(err)
	}
	turns, err := st.Turns(ctx, "goal-a")
	if err != nil {
		t.Fatal(err)
	}
	if d := NewDetail(sess, nil, turns, nil, func(string) string { return "" }); d.Session.TurnCount != 3 || len(d.Turns) != 3 {
		t.Errorf("detail of goal-a: %d turns counted, %d listed", d.Session.TurnCount, len(d.Turns))
	}
	st.Close()
	if _, err := WithTurnCounts(ctx, st, sessions); err == nil {
		t.Errorf("counting on a closed store: %v, want an error", err)
	}
}

func TestToolResultsCarryTheirOutcome(t *testing.T) {
	stopped := activities.UnansweredCall(true, false, true, "")
	msgs := NewMessages([]models.Message{
		{Role: "assistant", ToolCalls: []models.ToolCall{{ID: "c1", Function: models.FunctionCall{Name: "terminal"}}}},
		{Role: "tool", ToolCallID: "c1", Name: "terminal", Content: stopped},
		{Role: "user", Content: "Error: that is what I typed"},
	})
	if msgs[0].Outcome != "" || msgs[1].Outcome != OutcomeStopped || msgs[2].Outcome != "" {
		t.Errorf("outcomes: %q %q %q", msgs[0].Outcome, msgs[1].Outcome, msgs[2].Outcome)
	}
}

// TestMessagesCarryTheirPictures: a user message's pictures are shown by
// reference, never as bytes.
func TestMessagesCarryTheirPictures(t *testing.T) {
	img := turnapi.Image{ID: "ab12", MIME: "image/png", Name: "picture.png", Path: "uploads/ab12/picture.png", Size: 42}
	msgs := NewMessages([]models.Message{{Role: "user", Content: "What is this?", Images: []turnapi.Image{img}}, {Role: "assistant", Content: "A dot."}})
	if len(msgs[0].Images) != 1 || msgs[0].Images[0] != img || msgs[1].Images != nil {
		t.Fatalf("images: %+v, %+v", msgs[0].Images, msgs[1].Images)
	}
	data, err := json.Marshal(msgs[1])
	if err != nil || strings.Contains(string(data), "images") {
		t.Fatalf("a message without pictures says so: %s %v", data, err)
	}
}

// TestListAndShow: a page says whether more follow (limit 0: all, none
// more), each session with its turns counted and first message; Show is a
// session whole, and a session the store does not hold is ErrNotFound.
func TestListAndShow(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for _, id := range []string{"a", "b", "c"} {
		if _, err := st.EnsureSession(ctx, id, "m"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.AppendMessages(ctx, []models.Message{{SessionID: id, IdemKey: "k-" + id, Role: "user", Content: "hello " + id}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		offset, limit int
		n             int
		more          bool
	}{{0, 2, 2, true}, {2, 2, 1, false}, {0, 0, 3, false}, {0, 3, 3, false}} {
		page, more, err := List(ctx, st, c.offset, c.limit, false)
		if err != nil || len(page) != c.n || more != c.more {
			t.Errorf("List(%d, %d) = %d sessions, more %v, %v; want %d, %v", c.offset, c.limit, len(page), more, err, c.n, c.more)
		}
		for _, s := range page {
			if s.FirstMessage != "hello "+s.ID {
				t.Errorf("session %s: first message %q", s.ID, s.FirstMessage)
			}
		}
	}
	d, err := Show(ctx, st, "b")
	if err != nil || d.Session.ID != "b" || len(d.Messages) != 1 || d.Messages[0].Content != "hello b" {
		t.Fatalf("Show(b) = %+v, %v", d, err)
	}
	if _, err := Show(ctx, st, "nobody"); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("Show(nobody): %v, want ErrNotFound", err)
	}
}
