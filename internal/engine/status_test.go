package engine

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/keypool"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

var statusNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// started is a pending activity whose attempt started ago.
func started(name string, attempt int32, ago time.Duration) *workflowpb.PendingActivityInfo {
	return &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: name}, State: enumspb.PENDING_ACTIVITY_STATE_STARTED,
		Attempt: attempt, MaximumAttempts: 6, LastStartedTime: timestamppb.New(statusNow.Add(-ago))}
}

// TestDescribeCurrent: the step running now is the started activity (a
// tool batch named by its tool, timed from the tool's own start), or a
// quick tool without one; nothing between attempts or while a person is
// asked.
func TestDescribeCurrent(t *testing.T) {
	t.Parallel()
	scheduled := &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: turnapi.CallModelName},
		State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, Attempt: 2}
	tool := &toolRun{ToolEvent: activities.ToolEvent{ID: "c1", Name: "terminal", Args: `{"command":"make test"}`}, At: statusNow.Add(-190 * time.Second)}
	pending := func(p ...*workflowpb.PendingActivityInfo) []*workflowpb.PendingActivityInfo { return p }
	tests := []struct {
		name    string
		p       workflows.Progress
		pending []*workflowpb.PendingActivityInfo
		tool    *toolRun
		want    *CurrentWork
	}{
		{"a model call", workflows.Progress{}, pending(started(turnapi.CallModelName, 1, 12*time.Second)), nil,
			&CurrentWork{What: "model call", Attempt: 1, MaxAttempts: 6, RunningFor: "12s"}},
		{"a tool, timed from its own start", workflows.Progress{CurrentTool: "terminal"}, pending(started(turnapi.ExecuteToolsName, 1, 5*time.Minute)), tool,
			&CurrentWork{What: "tool", Tool: "terminal", Args: `{"command":"make test"}`, Attempt: 1, MaxAttempts: 6, RunningFor: "3m10s"}},
		{"a tool batch not started a tool yet", workflows.Progress{CurrentTool: "read_file"}, pending(started(turnapi.ExecuteToolsName, 1, 2*time.Second)), nil,
			&CurrentWork{What: "tool", Tool: "read_file", Attempt: 1, MaxAttempts: 6, RunningFor: "2s"}},
		{"a quick batch without an activity", workflows.Progress{CurrentTool: "terminal"}, nil, tool,
			&CurrentWork{What: "tool", Tool: "terminal", Args: `{"command":"make test"}`, RunningFor: "3m10s"}},
		{"a compaction", workflows.Progress{}, pending(started(turnapi.CompressContextName, 1, time.Second)), nil,
			&CurrentWork{What: "compaction", Attempt: 1, MaxAttempts: 6, RunningFor: "1s"}},
		{"between attempts: nothing runs", workflows.Progress{}, pending(scheduled), nil, nil},
		{"waiting for an approval", workflows.Progress{CurrentTool: "terminal", PendingApproval: &workflows.PendingApproval{Command: "rm -rf x"}},
			pending(started(turnapi.ExecuteToolsName, 1, time.Second)), tool, nil},
		{"waiting for an answer", workflows.Progress{CurrentTool: "clarify", PendingQuestion: &workflows.PendingQuestion{Question: "?"}}, nil, tool, nil},
	}
	for _, tt := range tests {
		c := describeCurrent(&tt.p, tt.pending, tt.tool, statusNow)
		if (c == nil) != (tt.want == nil) {
			t.Errorf("%s: %+v, want %+v", tt.name, c, tt.want)
			continue
		}
		if c == nil {
			continue
		}
		got := *c
		got.StartedAt = time.Time{}
		if got != *tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, *tt.want)
		}
	}
}

// TestTurnEvents: the tool running is the one started last and not ended;
// the last notice is the last wait event, made one visible line.
func TestTurnEvents(t *testing.T) {
	t.Parallel()
	ev := func(kind, data string, s int) models.Event {
		return models.Event{Kind: kind, Data: data, At: statusNow.Add(time.Duration(s) * time.Second)}
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
	if r := te.running(); r == nil || r.ID != "b" || !r.At.Equal(statusNow.Add(3*time.Second)) {
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

// TestDescribeWaits: the waits are the calls between attempts (with the
// last failure, made visible, and the failure class's own bound on
// attempts) and attempts running for a while; not a first attempt just
// started, a tool batch's first attempt (the tool running now) or a first
// scheduling.
func TestDescribeWaits(t *testing.T) {
	t.Parallel()
	now := statusNow
	pending := []*workflowpb.PendingActivityInfo{
		{ // between two attempts of a rate-limited call
			ActivityType: &commonpb.ActivityType{Name: "CallModel"}, State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED,
			Attempt: 2, MaximumAttempts: 6, NextAttemptScheduleTime: timestamppb.New(now.Add(4 * time.Minute)),
			LastFailure: &failurepb.Failure{Message: "model call failed (rate_limit, HTTP 429):\nslow down"},
		},
		started("CallModel", 1, 2*time.Second), // just started: nothing to show
		started("CallModel", 1, time.Minute),   // a slow first attempt
		// a tool batch's first attempt is the tool running now, not a wait
		{ActivityType: &commonpb.ActivityType{Name: "ExecuteTools"}, State: enumspb.PENDING_ACTIVITY_STATE_STARTED,
			Attempt: 1, MaximumAttempts: 3, LastStartedTime: timestamppb.New(now.Add(-time.Hour))},
		{ // its second attempt, after a failure, is
			ActivityType: &commonpb.ActivityType{Name: "ExecuteTools"}, State: enumspb.PENDING_ACTIVITY_STATE_STARTED,
			Attempt: 2, MaximumAttempts: 3, LastStartedTime: timestamppb.New(now.Add(-3 * time.Second)),
			LastFailure: &failurepb.Failure{Message: "worker \x1b[2Jlost"},
		},
		{ // scheduled for the first time, no retry wait
			ActivityType: &commonpb.ActivityType{Name: "CallModel"}, State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, Attempt: 1,
		},
		{ // after a body that is not the protocol: its class allows 3 attempts, not the policy's 6
			ActivityType: &commonpb.ActivityType{Name: "CallModel"}, State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED,
			Attempt: 2, MaximumAttempts: 6, NextAttemptScheduleTime: timestamppb.New(now.Add(2 * time.Second)),
			LastFailure: &failurepb.Failure{Message: "model call failed (invalid_response): <html>",
				FailureInfo: &failurepb.Failure_ApplicationFailureInfo{ApplicationFailureInfo: &failurepb.ApplicationFailureInfo{Type: "invalid_response"}}},
		},
	}
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	want := []ActivityWait{
		{What: "model call", Attempt: 2, MaxAttempts: 6, NextAttempt: at(4 * time.Minute), LastFailure: "model call failed (rate_limit, HTTP 429): slow down"},
		{What: "model call", Attempt: 1, MaxAttempts: 6, RunningFor: time.Minute},
		{What: "tool batch", Attempt: 2, MaxAttempts: 3, RunningFor: 3 * time.Second, LastFailure: "worker [2Jlost"}, // a control character is a space
		{What: "model call", Attempt: 2, MaxAttempts: 3, NextAttempt: at(2 * time.Second), LastFailure: "model call failed (invalid_response): <html>"},
	}
	got := describeWaits(pending, now)
	if len(got) != len(want) {
		t.Fatalf("waits %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if (g.NextAttempt == nil) != (w.NextAttempt == nil) || (g.NextAttempt != nil && !g.NextAttempt.Equal(*w.NextAttempt)) {
			t.Errorf("wait %d: next attempt %v, want %v", i, g.NextAttempt, w.NextAttempt)
		}
		g.NextAttempt, w.NextAttempt = nil, nil
		if g != w {
			t.Errorf("wait %d: %+v, want %+v", i, g, w)
		}
	}
}

// TestKeyPools: a status lists each configured endpoint with several keys
// (primary and fallbacks), each key by position and digest, ready or
// cooling down and why, then cooling keys of endpoints it does not see;
// endpoints of one key and cool-downs over are left out.
func TestKeyPools(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	cfg := config.Config{
		Model: config.Model{BaseURL: "http://primary.example/v1", APIKey: "sk-one,sk-two", Name: "m"},
		FallbackProviders: []config.Provider{
			{BaseURL: "http://single.example/v1", APIKey: "sk-single"},
			{ProviderOptions: config.ProviderOptions{Provider: "anthropic", APIKeys: []string{"sk-a", "sk-b", "sk-c"}}, Model: "claude"},
		},
	}
	now := time.Now()
	primary := keypool.Of("openai", "http://primary.example/v1", "m", []string{"sk-one", "sk-two"})
	for _, c := range []models.KeyCooldown{
		{Pool: primary.ID, KeyID: primary.Keys[0], Endpoint: primary.Endpoint, Until: now.Add(4200 * time.Millisecond), Class: "rate_limit", Status: 429},
		{Pool: primary.ID, KeyID: primary.Keys[1], Endpoint: primary.Endpoint, Until: now.Add(-time.Minute), Class: "rate_limit", Status: 429},
		{Pool: "elsewhere", KeyID: "abcdef012345", Endpoint: "openai http://other.example/v1 big", Until: now.Add(time.Hour), Class: "auth", Status: 401},
		{Pool: "over", KeyID: "bbbbbbbbbbbb", Endpoint: "openai http://old.example/v1 m", Until: now.Add(-time.Hour), Class: "auth"},
	} {
		if err := store.SetKeyCooldown(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	pools := keyPools(ctx, NewModelConfig(cfg), store, "no-such-session", now)
	type key struct {
		pos, of int
		id      string
		state   string
	}
	want := []struct {
		role, endpoint string
		keys           []key
	}{
		{"primary", "openai http://primary.example/v1 m", []key{{1, 2, primary.Keys[0], "cooling down for 4s (rate limited)"}, {2, 2, primary.Keys[1], "ready"}}},
		{"fallback 2", "anthropic https://api.anthropic.com claude", []key{{1, 3, keypool.KeyID("sk-a"), "ready"}, {2, 3, keypool.KeyID("sk-b"), "ready"}, {3, 3, keypool.KeyID("sk-c"), "ready"}}},
		{"other", "openai http://other.example/v1 big", []key{{0, 0, "abcdef012345", "cooling down for 1h0m0s (refused)"}}},
	}
	if len(pools) != len(want) {
		t.Fatalf("pools %+v", pools)
	}
	for i, w := range want {
		p := pools[i]
		if p.Role != w.role || p.Endpoint != w.endpoint || len(p.Keys) != len(w.keys) {
			t.Fatalf("pool %d: %+v, want %+v", i, p, w)
		}
		for j, k := range w.keys {
			g := p.Keys[j]
			if g.Position != k.pos || g.Of != k.of || g.KeyID != k.id || g.State != k.state || g.Ready != (k.state == "ready") || (g.CoolingUntil == nil) == (k.state != "ready") {
				t.Errorf("pool %d key %d: %+v, want %+v", i, j, g, k)
			}
		}
	}
}

// TestDescribePool: a pool whose cool-downs cannot be read shows its keys
// as unknown, with why.
func TestDescribePool(t *testing.T) {
	t.Parallel()
	pool := keypool.Of("openai", "http://x/v1", "m", []string{"k1", "k2"})
	now := time.Now()
	tests := []struct {
		name    string
		cooling map[string]keypool.Cooldown
		readErr error
		want    []string
	}{
		{"none cooling", nil, nil, []string{"ready", "ready"}},
		{"one cooling", map[string]keypool.Cooldown{pool.Keys[1]: {KeyID: pool.Keys[1], Until: now.Add(time.Minute), Class: "auth"}}, nil,
			[]string{"ready", "cooling down for 1m0s (refused)"}},
		{"not read", nil, errors.New("database is locked"), []string{"unknown", "unknown"}},
	}
	for _, tt := range tests {
		p := describePool("primary", pool, tt.cooling, tt.readErr, now)
		if len(p.Keys) != len(tt.want) || (tt.readErr != nil) != (p.Error != "") {
			t.Fatalf("%s: %+v", tt.name, p)
		}
		for i, k := range p.Keys {
			if k.State != tt.want[i] || k.Ready != (tt.want[i] == "ready") || k.Position != i+1 || k.Of != 2 {
				t.Errorf("%s: key %d = %+v, want %+v", tt.name, i+1, k, tt.want[i])
			}
		}
	}
}
