package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/worker"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/telemetry"
	"github.com/talaria-agent/talaria/scheduler"
	"github.com/talaria-agent/talaria/workflows"
)

// TestTracePerTurn runs two turns of one session on a real embedded
// Temporal with spans going to an in-memory exporter: each turn is one
// trace of its own (linked to its session's), holding the turn's workflow,
// the CallModel activity with the model's HTTP request inside it, and the
// tool that ran inside ExecuteTools. No span holds the message's text or
// the model's key.
func TestTracePerTurn(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(context.Background(), telemetry.WithSpanExporter(exp))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "t1", Name: "todo", Arguments: `{"todos":[{"id":"1","content":"trace it","status":"in_progress"}]}`}),
		fakellm.TextStep("first done"),
		fakellm.TextStep("second done"),
	)
	defer model.Close()
	rt := startRuntime(t, model, func(_ *config.Config, o *Options) { o.Telemetry = tel })

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const secret = "a confidential request about the gazebo"
	var turnIDs []string
	for i := range 2 {
		res, err := rt.RunTurn(ctx, workflows.TurnInput{SessionID: "traced", UserMessage: secret, Model: fakellm.DefaultModel,
			MaxIterations: 5, Workdir: t.TempDir()})
		if err != nil || !res.Completed {
			t.Fatalf("turn %d: %+v, %v", i+1, res, err)
		}
		turnIDs = append(turnIDs, res.TurnID)
	}

	spans := exp.GetSpans()
	t.Logf("spans:\n%s", names(spans))
	byTrace := map[trace.TraceID][]tracetest.SpanStub{}
	turnTrace := map[string]trace.TraceID{}
	for _, s := range spans {
		byTrace[s.SpanContext.TraceID()] = append(byTrace[s.SpanContext.TraceID()], s)
		if s.Name == "RunWorkflow:"+workflows.TurnWorkflowName {
			id := attr(s, "temporalWorkflowID")
			if prev, ok := turnTrace[id]; ok && prev != s.SpanContext.TraceID() {
				t.Errorf("turn %s runs in two traces", id)
			}
			turnTrace[id] = s.SpanContext.TraceID()
		}
		for _, kv := range s.Attributes {
			if v := kv.Value.String(); strings.Contains(v, "gazebo") || strings.Contains(v, "trace it") {
				t.Errorf("span %s attribute %s holds the conversation: %q", s.Name, kv.Key, v)
			}
		}
	}
	if len(turnTrace) != 2 || turnTrace[turnIDs[0]] == turnTrace[turnIDs[1]] {
		t.Fatalf("turn traces %v for turns %v, want one trace per turn; spans:\n%s", turnTrace, turnIDs, names(spans))
	}
	for i, id := range turnIDs {
		tid, ok := turnTrace[id]
		if !ok {
			t.Fatalf("no trace of turn %s; spans:\n%s", id, names(spans))
		}
		in := byTrace[tid]
		root := find(in, "StartChildWorkflow:"+workflows.TurnWorkflowName)
		if root == nil || root.Parent.IsValid() {
			t.Errorf("turn %d: its trace does not begin with the child workflow's start:\n%s", i+1, names(in))
		} else if len(root.Links) != 1 || root.Links[0].SpanContext.TraceID() == tid {
			t.Errorf("turn %d: the turn's trace is not linked to its session's (links %v)", i+1, root.Links)
		}
		call := find(in, "RunActivity:CallModel")
		if call == nil {
			t.Fatalf("turn %d: no CallModel activity span:\n%s", i+1, names(in))
		}
		http := find(in, "model POST")
		if http == nil || http.Parent.SpanID() != call.SpanContext.SpanID() || http.SpanKind != trace.SpanKindClient {
			t.Errorf("turn %d: no model HTTP client span inside CallModel:\n%s", i+1, names(in))
		} else if code := attr(*http, "http.response.status_code"); code != "200" {
			t.Errorf("turn %d: model HTTP span status %q", i+1, code)
		}
	}
	first := byTrace[turnTrace[turnIDs[0]]]
	tool := find(first, "tool todo")
	if tool == nil || attr(*tool, "talaria.outcome") != telemetry.ToolOK {
		t.Fatalf("turn 1: no tool span for todo:\n%s", names(first))
	}
	if parent := byID(first, tool.Parent.SpanID()); parent == nil || !strings.HasPrefix(parent.Name, "RunActivity:ExecuteTools") {
		t.Errorf("tool span's parent is %v, want the ExecuteTools activity", parent)
	}
}

func find(spans []tracetest.SpanStub, name string) *tracetest.SpanStub {
	for i := range spans {
		if spans[i].Name == name {
			return &spans[i]
		}
	}
	return nil
}

func byID(spans []tracetest.SpanStub, id trace.SpanID) *tracetest.SpanStub {
	for i := range spans {
		if spans[i].SpanContext.SpanID() == id {
			return &spans[i]
		}
	}
	return nil
}

func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

func names(spans []tracetest.SpanStub) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.SpanContext.TraceID().String()[:8] + " " + s.Name + "\n")
	}
	return b.String()
}

// TestCountTick: the slots a scheduler tick records missed or skipped are
// counted as cron runs with those statuses; those it starts are not (their
// run's end is).
func TestCountTick(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tel, err := telemetry.New(ctx, telemetry.WithMetrics(true))
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(ctx)
	ref := scheduler.SlotRef{JobID: "j", Slot: time.Now()}
	countTick(ctx, tel.Metrics())(scheduler.Result{Started: []scheduler.SlotRef{ref},
		Missed: []scheduler.SlotRef{ref, ref}, Skipped: []scheduler.SlotRef{ref}}, nil)
	rec := httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for status, want := range map[string]string{"missed": "2", "skipped": "1"} {
		if !strings.Contains(body, `status="`+status+`"} `+want+"\n") {
			t.Errorf("talaria_cron_runs_total{status=%q} is not %s:\n%s", status, want, grepLines(body, "talaria_cron_runs_total"))
		}
	}
	if strings.Contains(body, `status="started"`) || strings.Contains(body, `status="other"`) {
		t.Errorf("a started slot was counted:\n%s", grepLines(body, "talaria_cron_runs_total"))
	}
}

func grepLines(body, prefix string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestApprovalCountedOnce: an approval decided in the turn workflow is
// counted once, and not again when the worker replays the workflow's
// history (its cache purged, a query makes it replay the finished turn).
func TestApprovalCountedOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tel, err := telemetry.New(ctx, telemetry.WithMetrics(true))
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "a1", Name: "terminal", Arguments: `{"command":"rm -rf ./build"}`}),
		fakellm.TextStep("removed"),
	)
	defer model.Close()
	rt := startRuntime(t, model, func(_ *config.Config, o *Options) { o.Telemetry = tel })
	go func() {
		for ctx.Err() == nil {
			if p, err := rt.Running(ctx, "approved"); err == nil && p.PendingApproval != nil {
				_ = rt.Signal(ctx, p.TurnID, workflows.SignalApproval, workflows.ApprovalDecision{Choice: "session"})
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	res, err := rt.RunTurn(ctx, workflows.TurnInput{SessionID: "approved", UserMessage: "clean", Model: fakellm.DefaultModel,
		MaxIterations: 5, Workdir: t.TempDir(), Approvals: workflows.ApprovalSettings{Mode: workflows.ApprovalAsk, Timeout: time.Minute}})
	if err != nil || !res.Completed {
		t.Fatalf("turn: %+v, %v", res, err)
	}
	approvals := func() string {
		rec := httptest.NewRecorder()
		tel.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		return grepLines(rec.Body.String(), telemetry.MetricApprovals)
	}
	before := approvals()
	if !strings.Contains(before, `choice="session"`) || !strings.HasSuffix(before, " 1") {
		t.Fatalf("after the turn: %q, want talaria_approvals_total{choice=\"session\"} 1", before)
	}
	worker.PurgeStickyWorkflowCache()
	if _, err := rt.Progress(ctx, res.TurnID); err != nil {
		t.Fatalf("query the finished turn (a replay): %v", err)
	}
	if after := approvals(); after != before {
		t.Fatalf("a replay counted the approval again: %q, was %q", after, before)
	}
}
