package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// collector is an OTLP/HTTP trace receiver: it keeps the spans it is sent.
type collector struct {
	mu    sync.Mutex
	spans map[string][]string // trace id (hex) -> span names
	bad   []string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.URL.Path != "/v1/traces" || err != nil {
		c.bad = append(c.bad, r.Method+" "+r.URL.Path)
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				id := string(s.TraceId)
				c.spans[id] = append(c.spans[id], s.Name)
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// TestTracesToOTLP: serve with OTEL_EXPORTER_OTLP_ENDPOINT exports each
// turn as a trace of its own to that collector, with the turn's workflow,
// its CallModel activity and the model's HTTP request; the model is sent
// no trace header.
func TestTracesToOTLP(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("first"), fakellm.TextStep("second"))
	defer model.Close()
	col := &collector{spans: map[string][]string{}}
	srv := httptest.NewServer(col)
	defer srv.Close()
	u := newUser(t, model.URL())
	u.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = srv.URL
	s := u.serve(freePort(t))
	for _, q := range []string{"one", "two"} {
		if res, stderr, code := u.chatJSON(2*time.Minute, "-q", q, "--session", "traced"); code != 0 || !res.Completed {
			t.Fatalf("chat: exit %d %+v\n%s", code, res, stderr)
		}
	}
	// SIGTERM: serve flushes the spans it has not exported yet.
	if err := s.stop(t); err != nil {
		t.Fatalf("serve: %v", err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.bad) > 0 {
		t.Fatalf("the collector was sent %v", col.bad)
	}
	turns := 0
	for _, names := range col.spans {
		joined := "\n" + strings.Join(names, "\n") + "\n"
		if !strings.Contains(joined, "\nRunWorkflow:TurnWorkflow\n") {
			continue
		}
		turns++
		for _, want := range []string{"StartChildWorkflow:TurnWorkflow", "RunActivity:CallModel", "model POST"} {
			if !strings.Contains(joined, "\n"+want+"\n") {
				t.Errorf("a turn's trace lacks %s:%s", want, joined)
			}
		}
	}
	if turns != 2 {
		t.Fatalf("%d traces hold a turn, want 2 (one per turn): %v", turns, col.spans)
	}
	for _, req := range model.Requests() {
		for k := range req.Header {
			if strings.EqualFold(k, "traceparent") || strings.EqualFold(k, "tracestate") || strings.EqualFold(k, "baggage") {
				t.Errorf("the model was sent %s", k)
			}
		}
	}
}
