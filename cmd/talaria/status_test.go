package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

func TestArgsSummary(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"a command", `{"command":"make test","timeout":60}`, "make test"},
		{"a path", `{"path":"src/main.go"}`, "src/main.go"},
		{"no arguments", `{}`, ""},
		{"other arguments", `{"n":3}`, `{"n":3}`},
		{"clipped JSON", `{"command":"echo hi`, `{"command":"echo hi`},
		{"an escape sequence is made visible", `{"command":"echo \u001b[2J; rm x"}`, `echo \x1b[2J; rm x`},
		{"a newline stays on the line", `{"command":"a\nb"}`, `a\nb`},
		{"long", `{"command":"` + strings.Repeat("x", 500) + `"}`, strings.Repeat("x", shownArgs) + "…"},
	}
	for _, tt := range tests {
		if got := argsSummary(tt.args); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDescribeCurrent(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	started := func(name string, attempt int32, ago time.Duration) *workflowpb.PendingActivityInfo {
		return &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: name}, State: enumspb.PENDING_ACTIVITY_STATE_STARTED,
			Attempt: attempt, MaximumAttempts: 6, LastStartedTime: timestamppb.New(now.Add(-ago))}
	}
	scheduled := &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: turnapi.CallModelName},
		State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, Attempt: 2}
	tool := &toolRun{ToolEvent: activities.ToolEvent{ID: "c1", Name: "terminal", Args: `{"command":"make test"}`}, At: now.Add(-190 * time.Second)}
	tests := []struct {
		name    string
		p       workflows.Progress
		pending []*workflowpb.PendingActivityInfo
		tool    *toolRun
		want    string
	}{
		{"a model call", workflows.Progress{}, []*workflowpb.PendingActivityInfo{started(turnapi.CallModelName, 1, 12*time.Second)}, nil,
			"  model call: attempt 1 of 6, running 12s"},
		{"a tool, timed from its own start", workflows.Progress{CurrentTool: "terminal"},
			[]*workflowpb.PendingActivityInfo{started(turnapi.ExecuteToolsName, 1, 5*time.Minute)}, tool,
			"  tool: terminal `make test`, running 3m10s"},
		{"a tool batch not started a tool yet", workflows.Progress{CurrentTool: "read_file"},
			[]*workflowpb.PendingActivityInfo{started(turnapi.ExecuteToolsName, 1, 2*time.Second)}, nil,
			"  tool: read_file, running 2s"},
		{"a quick batch without an activity", workflows.Progress{CurrentTool: "terminal"}, nil, tool,
			"  tool: terminal `make test`, running 3m10s"},
		{"a compaction", workflows.Progress{}, []*workflowpb.PendingActivityInfo{started(turnapi.CompressContextName, 1, time.Second)}, nil,
			"  compaction: attempt 1 of 6, running 1s"},
		{"between attempts: nothing runs", workflows.Progress{}, []*workflowpb.PendingActivityInfo{scheduled}, nil, ""},
		{"waiting for an approval", workflows.Progress{CurrentTool: "terminal", PendingApproval: &workflows.PendingApproval{Command: "rm -rf x"}},
			[]*workflowpb.PendingActivityInfo{started(turnapi.ExecuteToolsName, 1, time.Second)}, tool, ""},
		{"waiting for an answer", workflows.Progress{CurrentTool: "clarify", PendingQuestion: &workflows.PendingQuestion{Question: "?"}}, nil, tool, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := describeCurrent(&tt.p, tt.pending, tt.tool, now)
			if got := currentLine(c, nil); got != tt.want {
				t.Fatalf("%q, want %q (%+v)", got, tt.want, c)
			}
		})
	}
	// A slow model call is already a wait: it is not said twice.
	pending := []*workflowpb.PendingActivityInfo{started(turnapi.CallModelName, 1, time.Minute)}
	c := describeCurrent(&workflows.Progress{}, pending, nil, now)
	if got := currentLine(c, describeWaits(pending, now)); got != "" {
		t.Fatalf("a slow call is shown twice: %q", got)
	}
}

// TestTurnEvents: the tool running is the one started last and not ended;
// the last notice is the last wait event, made one visible line.
func TestTurnEvents(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := func(kind, data string, s int) models.Event {
		return models.Event{Kind: kind, Data: data, At: at.Add(time.Duration(s) * time.Second)}
	}
	var te turnEvents
	for _, e := range []models.Event{
		ev(events.KindToolStart, `{"id":"a","name":"read_file"}`, 0),
		ev(events.KindToolEnd, `{"id":"a","name":"read_file"}`, 1),
		ev(events.KindWait, "model call failed (server_error, HTTP 500):\n\x1b[31mboom; next attempt (2 of 6) in 1s", 2),
		ev(events.KindToolStart, `{"id":"b","name":"terminal","args":"{\"command\":\"make\"}"}`, 3),
		ev(events.KindToolStart, `not json`, 4),
		ev(events.KindDelta, "text", 5),
	} {
		te.add(e)
	}
	if r := te.running(); r == nil || r.ID != "b" || !r.At.Equal(at.Add(3*time.Second)) {
		t.Fatalf("running %+v", r)
	}
	if te.notice == nil || te.notice.Text != `model call failed (server_error, HTTP 500):\n\x1b[31mboom; next attempt (2 of 6) in 1s` {
		t.Fatalf("notice %+v", te.notice)
	}
	te.add(ev(events.KindToolEnd, `{"id":"b","name":"terminal"}`, 6))
	if r := te.running(); r != nil {
		t.Fatalf("an ended tool runs: %+v", r)
	}
}

func TestPrintStatus(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	next := now.Add(3 * time.Second)
	base := workflows.Progress{TurnID: "s1-turn-2", Iteration: 2, BudgetLeft: 88, APICalls: 3}
	with := func(f func(p *workflows.Progress)) *workflows.Progress {
		p := base
		f(&p)
		return &p
	}
	tests := []struct {
		name string
		r    statusReport
		want []string
		not  []string
	}{
		{"idle with a queue", statusReport{Session: workflows.SessionState{Queued: []string{"first\nline", "second"}}},
			[]string{"session s1: idle\n", "  queued 1: first\\nline\n", "  queued 2: second\n"}, nil},
		{"an approval", statusReport{Turn: with(func(p *workflows.Progress) {
			p.PendingApproval = &workflows.PendingApproval{Command: "rm -rf build\x1b[2J", Reason: "recursive delete"}
		})}, []string{"session s1: running s1-turn-2 — iteration 2, 88 left, 3 model calls\n",
			"  approval needed: rm -rf build\\x1b[2J\n", "    reason:  recursive delete\n",
			"    approve: talaria approve s1 ", "    deny:    talaria deny s1\n"}, []string{"question"}},
		{"a question", statusReport{Turn: with(func(p *workflows.Progress) {
			p.PendingQuestion = &workflows.PendingQuestion{Question: "Which colour?", Choices: []string{"red", "blue"}}
		})}, []string{"  question: Which colour?\n", "    1. red\n", "    2. blue\n", "    answer:  talaria answer s1 \"YOUR ANSWER\"\n"},
			[]string{"approve"}},
		{"steers", statusReport{Turn: with(func(p *workflows.Progress) {
			p.PendingSteers, p.Steers = 2, []string{"be brief\nplease", "and polite"}
		})}, []string{"  steers pending: 2 — next: \"be brief\\nplease\" (delivered at the turn's next safe point)\n"}, nil},
		{"a retry between attempts hides the notice it repeats", statusReport{Turn: &base,
			Waits:      []activityWait{{What: "model call", Attempt: 2, MaxAttempts: 6, NextAttempt: &next, LastFailure: "model call failed (server_error, HTTP 500): boom"}},
			LastNotice: &turnNotice{Text: "model call failed (server_error, HTTP 500): boom; next attempt (2 of 6) in 4s", At: now.Add(-time.Second)}},
			[]string{"  waiting: model call attempt 2 of 6 in 3s — last failure: model call failed (server_error, HTTP 500): boom\n"},
			[]string{"last notice"}},
		{"the last notice after a retry", statusReport{Turn: &base,
			Current:    &currentWork{What: "model call", Attempt: 2, MaxAttempts: 6, RunningFor: "1s"},
			LastNotice: &turnNotice{Text: "model call failed (server_error, HTTP 500): boom; next attempt (2 of 6) in 4s", At: now.Add(-5 * time.Second)}},
			[]string{"  model call: attempt 2 of 6, running 1s\n", "  last notice, 5s ago: model call failed (server_error, HTTP 500): boom; next attempt (2 of 6) in 4s\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			printStatus(&out, "s1", tt.r, now)
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("lacks %q", w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("has %q", n)
				}
			}
			if t.Failed() {
				t.Logf("printed:\n%s", out.String())
			}
		})
	}
}

// TestStatusJSONKeys: every key of status's JSON is snake_case.
func TestStatusJSONKeys(t *testing.T) {
	now := time.Now()
	r := statusReport{
		Session: workflows.SessionState{SessionID: "s", Running: "t", Queued: []string{"q"}, Assigned: map[string]string{"req-1": "t"}},
		Turn: &workflows.Progress{TurnID: "t", CurrentTool: "terminal", PendingSteers: 1, Steers: []string{"x"}, Recent: []string{"r"},
			PendingApproval: &workflows.PendingApproval{CallID: "c", Command: "rm"}, PendingQuestion: &workflows.PendingQuestion{Question: "?", Choices: []string{"a"}}},
		Waits:      []activityWait{{What: "model call", Attempt: 2, MaxAttempts: 6, NextAttempt: &now, RunningFor: time.Second, LastFailure: "x"}},
		Current:    &currentWork{What: "tool", Tool: "terminal", Args: "{}", Attempt: 1, MaxAttempts: 3, StartedAt: now, RunningFor: "1s"},
		LastNotice: &turnNotice{Text: "x", At: now},
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if bad := nonSnakeKeys(v, "", map[string]bool{"session.assigned": true}); len(bad) > 0 {
		t.Fatalf("keys not snake_case: %v\n%s", bad, data)
	}
}

// nonSnakeKeys lists the object keys in v that are not snake_case, skipping
// the values of maps keyed by data (skip, by path).
func nonSnakeKeys(v any, path string, skip map[string]bool) []string {
	var bad []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := strings.TrimPrefix(path+"."+k, ".")
			if strings.ToLower(k) != k || strings.ContainsAny(k, " -") {
				bad = append(bad, p)
			}
			if !skip[p] {
				bad = append(bad, nonSnakeKeys(e, p, skip)...)
			}
		}
	case []any:
		for _, e := range x {
			bad = append(bad, nonSnakeKeys(e, path, skip)...)
		}
	}
	return bad
}
