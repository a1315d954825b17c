package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// metricsURL finds the metrics URL on a ready line.
var metricsURL = regexp.MustCompile(`: ready \(.*, metrics (http://\S+?/metrics)[,)]`)

// TestMetrics: serve with --metrics-listen serves Prometheus text at
// /metrics (and nothing else). After one turn that runs a tool, calls one
// that does not exist and has a dangerous command refused by its
// non-interactive sender, it holds Talaria's own series with bounded
// labels (the turn's stop reason, the model calls by provider class, the
// tokens, the tool calls by registry name or "other", the approval's
// choice), the Temporal SDK's metrics and the embedded server's; no label
// carries the model's address or the message's text.
func TestMetrics(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "m1", Name: "terminal", Arguments: `{"command":"echo metrics-ok"}`}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "m2", Name: "no_such_tool_9f3a", Arguments: `{}`}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "m3", Name: "terminal", Arguments: `{"command":"rm -rf ./victim"}`}),
		fakellm.TextStep("done counting"),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	victim := filepath.Join(u.workdir, "victim")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	s := u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0",
		"--metrics-listen", fmt.Sprintf("127.0.0.1:%d", port))
	w := s.cmd.Stderr.(*lockedWriter)
	w.mu.Lock()
	m := metricsURL.FindStringSubmatch(s.stderr.String())
	w.mu.Unlock()
	want := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	if m == nil || m[1] != want {
		t.Fatalf("ready line does not give the metrics URL %s:\n%s", want, s.stderr.String())
	}

	const secret = "count the marmosets quietly"
	res, stderr, code := u.chatJSON(2*time.Minute, "-q", secret, "--session", "metrics-e2e")
	if code != 0 || !res.Completed {
		t.Fatalf("chat: exit %d, result %+v\n%s", code, res, stderr)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("the refused command ran: %v", err)
	}

	status, body := fetch(context.Background(), t, http.DefaultClient, want)
	if status != http.StatusOK {
		t.Fatalf("GET /metrics: %d %.300q", status, body)
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		min    float64
	}{
		{"talaria_turns_total", map[string]string{"stop_reason": "text_response"}, 1},
		{"talaria_model_calls_total", map[string]string{"provider": "local", "outcome": "ok"}, 4},
		{"talaria_model_call_seconds_count", map[string]string{"provider": "local", "outcome": "ok"}, 4},
		{"talaria_tokens_total", map[string]string{"kind": "prompt"}, 1},
		{"talaria_tokens_total", map[string]string{"kind": "completion"}, 1},
		{"talaria_tool_calls_total", map[string]string{"tool": "terminal", "outcome": "ok"}, 1},
		{"talaria_tool_calls_total", map[string]string{"tool": "other", "outcome": "invalid"}, 1},
		{"talaria_tool_calls_total", map[string]string{"tool": "terminal", "outcome": "refused"}, 1},
		{"talaria_approvals_total", map[string]string{"choice": "deny"}, 1},
		// The Temporal SDK's (client and worker) and the embedded server's.
		{"temporal_request_total", map[string]string{"operation": "RespondWorkflowTaskCompleted"}, 1},
		{"temporal_workflow_completed_total", map[string]string{"workflow_type": "TurnWorkflow"}, 1},
		{"temporal_activity_execution_latency_seconds_count", map[string]string{"activity_type": "CallModel"}, 1},
		{"service_requests_total", map[string]string{"operation": "RespondActivityTaskCompleted"}, 1},
	} {
		v, ok := sample(body, c.name, c.labels)
		if !ok || v < c.min {
			t.Errorf("%s%v = %v (found %v), want at least %v; series of that name:\n%s", c.name, c.labels, v, ok, c.min, seriesOf(body, c.name))
		}
	}
	host := strings.SplitN(strings.TrimPrefix(model.URL(), "http://"), "/", 2)[0] // the model's host:port
	for _, leak := range []string{host, secret, "no_such_tool_9f3a", "metrics-ok", "victim"} {
		if strings.Contains(body, leak) {
			t.Errorf("/metrics holds %q", leak)
		}
	}

	// Nothing but /metrics, and only to read.
	for _, path := range []string{"/", "/debug/pprof/", "/metrics/x", "/api/v1/namespaces"} {
		if status, _ := fetch(context.Background(), t, http.DefaultClient, "http://127.0.0.1:"+strconv.Itoa(port)+path); status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, status)
		}
	}
	resp, err := http.PostForm(want, url.Values{"x": {"1"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d, want 405", resp.StatusCode)
	}
}

// TestMetricsAddressTaken: a metrics address another process holds stops
// the command at start with one line naming it, before it connects to
// anything.
func TestMetricsAddressTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	u := newUser(t, "http://127.0.0.1:1/v1")
	taken := ln.Addr().String()
	for _, args := range [][]string{
		{"worker", "--temporal-address", "127.0.0.1:1", "--metrics-listen", taken},
		{"serve", "--temporal-port", "0", "--ui-port", "0", "--metrics-listen", taken},
		{"serve", "--temporal-port", "0", "--ui-port", "0", "--metrics-listen", "no-port"},
	} {
		_, stderr, code := u.run(time.Minute, args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		last := lines[len(lines)-1]
		if code != 2 || !strings.Contains(last, "metrics") || strings.Contains(stderr, "goroutine ") {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 2 and one line about the metrics address", args, code, stderr)
		}
		if args[len(args)-1] == taken && !strings.Contains(last, taken) {
			t.Errorf("%v: %q does not name %s", args, last, taken)
		}
	}
}

// sample is the value of the first series of name whose labels include
// labels, from Prometheus text.
func sample(body, name string, labels map[string]string) (float64, bool) {
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for k, v := range labels {
			if !strings.Contains(line, fmt.Sprintf("%s=%q", k, v)) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		return f, err == nil
	}
	return 0, false
}

// seriesOf lists the series of name, for a failure message.
func seriesOf(body, name string) string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			out = append(out, line)
		}
	}
	if len(out) > 20 {
		out = out[:20]
	}
	return strings.Join(out, "\n")
}

// TestMetricsOfEachProcess: in a deployment of processes (talaria
// temporal, a worker, a scheduler), each serves its own /metrics: the
// server's (service_*), the worker's turns and its SDK metrics, the
// scheduler's SDK client; each names its process.
func TestMetricsOfEachProcess(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("several processes")
	}
	model := fakellm.New(fakellm.TextStep("from a worker"))
	defer model.Close()
	host := newUser(t, model.URL())
	port, mTemporal := freePort(t), freePort(t)
	host.daemon("talaria temporal: ready", "temporal", "--temporal-port", fmt.Sprint(port), "--ui-port", "0",
		"--metrics-listen", fmt.Sprintf("127.0.0.1:%d", mTemporal))
	cred := filepath.Join(host.home, "tls", "talaria.pem")
	shared := map[string]string{"TEMPORAL_ADDRESS": fmt.Sprintf("127.0.0.1:%d", port),
		"TALARIA_DB": filepath.Join(t.TempDir(), "shared.db"), "TEMPORAL_TLS_CERT": cred, "TEMPORAL_TLS_KEY": cred,
		"TEMPORAL_TLS_CA": cred, "TEMPORAL_TLS_SERVER_NAME": "localhost"}
	procs := map[string]int{"temporal": mTemporal}
	var sender *user
	for _, name := range []string{"worker", "scheduler", ""} {
		u := newUser(t, model.URL())
		for k, v := range shared {
			u.env[k] = v
		}
		if name == "" {
			sender = u
			break
		}
		procs[name] = freePort(t)
		u.daemon("talaria "+name+": ready", name, "--metrics-listen", fmt.Sprintf("127.0.0.1:%d", procs[name]))
	}
	// send has no worker of its own: the worker process runs the turn.
	if out, stderr, code := sender.run(time.Minute, "send", "procs", "hello over there", "--mode", "queue"); code != 0 {
		t.Fatalf("send: exit %d %s%s", code, out, stderr)
	}
	workerMetrics := fmt.Sprintf("http://127.0.0.1:%d/metrics", procs["worker"])
	waitFor(t, time.Minute, func() bool { // the turn is counted as it ends, its workflow a moment later
		_, body := fetch(context.Background(), t, http.DefaultClient, workerMetrics)
		return strings.Contains(body, "talaria_turns_total{") && strings.Contains(body, "temporal_workflow_completed_total")
	})
	for name, checks := range map[string][]string{
		"temporal":  {"service_requests_total", `talaria_process="temporal"`},
		"worker":    {`talaria_turns_total{otel_scope_name="talaria",otel_scope_version="",stop_reason="text_response"} 1`, "temporal_workflow_completed_total", `talaria_process="worker"`},
		"scheduler": {`temporal_request_total{`, `talaria_process="scheduler"`},
	} {
		status, body := fetch(context.Background(), t, http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/metrics", procs[name]))
		if status != http.StatusOK {
			t.Fatalf("%s /metrics: %d", name, status)
		}
		for _, want := range checks {
			if !strings.Contains(body, want) {
				t.Errorf("%s /metrics lacks %s", name, want)
			}
		}
	}
}

// TestProfiles: serve --pprof-listen serves Go's profiles on a loopback
// address and names them in its ready line; any other address stops it at
// start with one line.
func TestProfiles(t *testing.T) {
	t.Parallel()
	u := newUser(t, "http://127.0.0.1:1/v1")
	_, stderr, code := u.run(time.Minute, "serve", "--temporal-port", "0", "--ui-port", "0", "--pprof-listen", "0.0.0.0:6060")
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); code != 2 || !strings.Contains(lines[len(lines)-1], "loopback") {
		t.Errorf("--pprof-listen 0.0.0.0:6060: exit %d, stderr:\n%s\nwant exit 2 and one line asking for a loopback address", code, stderr)
	}
	port := freePort(t)
	s := u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0", "--pprof-listen", fmt.Sprintf("127.0.0.1:%d", port))
	want := fmt.Sprintf("profiles http://127.0.0.1:%d/debug/pprof/", port)
	w := s.cmd.Stderr.(*lockedWriter)
	w.mu.Lock()
	ready := s.stderr.String()
	w.mu.Unlock()
	if !strings.Contains(ready, want) {
		t.Fatalf("the ready line does not say %q:\n%s", want, ready)
	}
	status, body := fetch(context.Background(), t, http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/goroutine?debug=1", port))
	if status != http.StatusOK || !strings.Contains(body, "goroutine profile:") {
		t.Fatalf("goroutine profile: %d %.300q", status, body)
	}
}
