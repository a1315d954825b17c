package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
)

// startTurnAPI is a storeAPI whose engine runs turns: a worker, and a
// scripted model at model's URL.
func startTurnAPI(t *testing.T, model *fakellm.Server) *storeAPI {
	t.Helper()
	cfg := config.Default(t.TempDir())
	cfg.Model.BaseURL, cfg.Model.APIKey, cfg.Model.Name = model.URL(), "model-key", "fake-model"
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rt, err := engine.Start(t.Context(), cfg, engine.Options{Private: true, Worker: true, Logger: logger})
	if err != nil {
		t.Fatalf("start the engine: %v", err)
	}
	t.Cleanup(rt.Close)
	srv, err := New(Options{Runtime: rt, Config: cfg, Key: storeAPIKey, Workdir: t.TempDir(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &storeAPI{t: t, rt: rt, url: hs.URL}
}

// waitFor polls GET path until ok says so.
func (a *storeAPI) waitFor(path string, within time.Duration, ok func(run) bool) run {
	a.t.Helper()
	deadline := time.Now().Add(within)
	for {
		var r run
		status, data := a.do(http.MethodGet, path, nil)
		if status == http.StatusOK && json.Unmarshal(data, &r) == nil && ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("GET %s: %d %s after %s", path, status, data, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRunControls: steer reaches the running turn (the model's next
// request carries it), a clarify question is answered over the API, and
// controls of a run that waits on nothing, or has ended, are 409s.
func TestRunControls(t *testing.T) {
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "s1", Name: "terminal", Arguments: `{"command":"sleep 1"}`}),
		fakellm.TextStep("steered answer"),
		fakellm.ToolStep(fakellm.ToolCall{ID: "q1", Name: "clarify", Arguments: `{"question":"Which colour?","choices":["red","blue"]}`}),
		fakellm.TextStep("blue it is"),
	)
	defer model.Close()
	a := startTurnAPI(t, model)

	var started runStarted
	a.want(http.StatusAccepted, http.MethodPost, "/v1/runs", map[string]any{"input": "do a slow thing", "session_id": "ctl"}, &started)
	path := "/v1/runs/" + started.RunID
	a.waitFor(path, 30*time.Second, func(r run) bool { return r.CurrentTool == "terminal" })
	var steered map[string]string
	a.want(http.StatusAccepted, http.MethodPost, path+"/steer", map[string]string{"text": "also mention the weather"}, &steered)
	if steered["status"] != "steered" {
		t.Fatalf("steer = %v", steered)
	}
	a.want(http.StatusConflict, http.MethodPost, path+"/approval", map[string]string{"choice": "once"}, nil)
	a.want(http.StatusConflict, http.MethodPost, path+"/answer", map[string]string{"text": "x"}, nil)
	r := a.waitFor(path, 30*time.Second, func(r run) bool { return r.Status == "completed" })
	if r.FinalText == nil || *r.FinalText != "steered answer" {
		t.Fatalf("run = %+v", r)
	}
	reqs := model.Requests()
	if body := string(reqs[1].Raw); !strings.Contains(body, "also mention the weather") {
		t.Errorf("the model's second request lacks the steer: %.500s", body)
	}
	for _, c := range []string{"/stop", "/steer", "/approval", "/answer"} {
		status, data := a.do(http.MethodPost, path+c, map[string]string{"text": "late", "choice": "once"})
		if status != http.StatusConflict || apiErrorOf(t, data).Code != "run_ended" {
			t.Errorf("POST %s on an ended run: %d %s", c, status, data)
		}
	}

	// A question, answered over the API.
	a.want(http.StatusAccepted, http.MethodPost, "/v1/runs", map[string]any{"input": "pick a colour", "session_id": "ctl"}, &started)
	path = "/v1/runs/" + started.RunID
	r = a.waitFor(path, 30*time.Second, func(r run) bool { return r.PendingQuestion != nil })
	if r.PendingQuestion.Question != "Which colour?" {
		t.Fatalf("pending question %+v", r.PendingQuestion)
	}
	a.want(http.StatusConflict, http.MethodPost, path+"/approval", map[string]string{"choice": "once"}, nil)
	a.want(http.StatusConflict, http.MethodPost, path+"/answer", map[string]string{"text": "blue", "call_id": "other"}, nil)
	a.want(http.StatusAccepted, http.MethodPost, path+"/answer", map[string]string{"text": "blue"}, nil)
	r = a.waitFor(path, 30*time.Second, func(r run) bool { return r.Status == "completed" })
	if r.FinalText == nil || *r.FinalText != "blue it is" || !strings.Contains(string(model.Requests()[3].Raw), "blue") {
		t.Fatalf("run = %+v", r)
	}
}

// TestRunBadInput: what a client can get wrong is a 4xx in the error
// shape, one line, and no turn starts.
func TestRunBadInput(t *testing.T) {
	model := fakellm.New()
	defer model.Close()
	a := startTurnAPI(t, model)
	long := strings.Repeat("s", 129)
	for _, tt := range []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"empty input", "POST", "/v1/runs", map[string]any{"input": "  "}, 400, "empty_input"},
		{"no body", "POST", "/v1/runs", nil, 400, "invalid_json"},
		{"not JSON", "POST", "/v1/runs", "input=hi", 400, "invalid_json"},
		{"two values", "POST", "/v1/runs", `{"input":"a"}{"input":"b"}`, 400, "invalid_json"},
		{"bad session id", "POST", "/v1/runs", map[string]any{"input": "hi", "session_id": "../etc"}, 400, "invalid_session_id"},
		{"long session id", "POST", "/v1/runs", map[string]any{"input": "hi", "session_id": long}, 400, "invalid_session_id"},
		{"bad mode", "POST", "/v1/runs", map[string]any{"input": "hi", "mode": "now"}, 400, "invalid_mode"},
		{"too many iterations", "POST", "/v1/runs", map[string]any{"input": "hi", "max_iterations": 1000000}, 400, "invalid_max_iterations"},
		{"negative iterations", "POST", "/v1/runs", map[string]any{"input": "hi", "max_iterations": -1}, 400, "invalid_max_iterations"},
		{"a model not offered", "POST", "/v1/runs", map[string]any{"input": "hi", "model": "gpt-4o"}, 404, "model_not_found"},
		{"bad tool name", "POST", "/v1/runs", map[string]any{"input": "hi", "tools": []string{"rm -rf"}}, 400, "invalid_tools"},
		{"a message over 1 MiB", "POST", "/v1/runs", map[string]any{"input": strings.Repeat("x", 1<<20+1)}, 413, "input_too_large"},
		{"a field runs do not take", "POST", "/v1/runs", map[string]any{"input": "hi", "max_iteration": 3}, 400, "invalid_json"},
		{"input of the wrong type", "POST", "/v1/runs", map[string]any{"input": 5}, 400, "invalid_json"},
		{"chat, an image by http", "POST", "/v1/chat/completions", map[string]any{"messages": []map[string]any{{"role": "user", "content": []map[string]any{
			{"type": "image_url", "image_url": map[string]string{"url": "http://example.com/a.png"}}}}}}, 400, "unsupported_image_url"},
		{"chat, audio", "POST", "/v1/chat/completions", map[string]any{"messages": []map[string]any{{"role": "user", "content": []map[string]any{
			{"type": "input_audio", "input_audio": map[string]string{"data": "AAAA", "format": "wav"}}}}}}, 400, "unsupported_content"},
		{"chat, an unknown role", "POST", "/v1/chat/completions", map[string]any{"messages": []map[string]string{{"role": "bot", "content": "x"}, {"role": "user", "content": "y"}}}, 400, "invalid_role"},
		{"responses, an image in a file", "POST", "/v1/responses", map[string]any{"input": []map[string]any{{"role": "user", "content": []map[string]string{
			{"type": "input_image", "image_url": "file:///etc/passwd"}}}}}, 400, "unsupported_image_url"},
		{"responses, a file", "POST", "/v1/responses", map[string]any{"input": []map[string]any{{"role": "user", "content": []map[string]string{
			{"type": "input_file", "file_id": "file-1"}}}}}, 400, "unsupported_content"},
		{"unknown run", "GET", "/v1/runs/run_5_nobody", nil, 404, "not_found"},
		{"malformed run id", "GET", "/v1/runs/turn%2Fx%2F1", nil, 404, "not_found"},
		{"events of an unknown run", "GET", "/v1/runs/run_5_nobody/events", nil, 404, "not_found"},
		{"bad choice", "POST", "/v1/runs/run_1_x/approval", map[string]string{"choice": "sometimes"}, 400, "invalid_choice"},
		{"a grant without its call", "POST", "/v1/runs/run_1_x/approval", map[string]string{"choice": "always"}, 400, "call_id_required"},
		{"more iterations than the server's", "POST", "/v1/runs", map[string]any{"input": "hi", "max_iterations": config.DefaultMaxIterations + 1}, 400, "invalid_max_iterations"},
		{"chat without a user message", "POST", "/v1/chat/completions", map[string]any{"messages": []map[string]string{{"role": "system", "content": "x"}}}, 400, "no_user_message"},
		{"chat, a model not offered", "POST", "/v1/chat/completions", map[string]any{"messages": []map[string]string{{"role": "user", "content": "x"}}, "model": "nope"}, 404, "model_not_found"},
		{"responses streaming", "POST", "/v1/responses", map[string]any{"input": "hi", "stream": true}, 400, "stream_unsupported"},
		{"responses, a foreign previous id", "POST", "/v1/responses", map[string]any{"input": "hi", "previous_response_id": "resp_abc"}, 404, "not_found"},
		{"responses, a made-up previous id", "POST", "/v1/responses", map[string]any{"input": "hi", "previous_response_id": "resp_1_brandnew"}, 404, "not_found"},
		{"responses, a previous id past the session's turns", "POST", "/v1/responses", map[string]any{"input": "hi", "previous_response_id": "resp_99_" + "api-none"}, 404, "not_found"},
		{"unknown route", "GET", "/v2/anything", nil, 404, "not_found"},
		{"wrong method", "DELETE", "/v1/runs", nil, 405, "method_not_allowed"},
		{"bad Last-Event-ID", "GET", "/v1/runs/run_1_x/events?after=-3", nil, 404, "not_found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, data := a.do(tt.method, tt.path, tt.body)
			if status != tt.status {
				t.Fatalf("%d %s, want %d", status, data, tt.status)
			}
			if e := apiErrorOf(t, data); e.Code != tt.code {
				t.Errorf("code %q (%s), want %q", e.Code, e.Message, tt.code)
			}
		})
	}
	if n := len(model.Requests()); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
}

// TestResponsesChain: a response's id continues its session.
func TestResponsesChain(t *testing.T) {
	model := fakellm.New(fakellm.TextStep("first answer"), fakellm.TextStep("second answer"))
	defer model.Close()
	a := startTurnAPI(t, model)
	var first, second struct {
		ID         string `json:"id"`
		OutputText string `json:"output_text"`
		Status     string `json:"status"`
	}
	a.want(http.StatusOK, http.MethodPost, "/v1/responses", map[string]any{"input": "remember the word lantern"}, &first)
	if first.OutputText != "first answer" || first.Status != "completed" || !strings.HasPrefix(first.ID, "resp_1_") {
		t.Fatalf("first response %+v", first)
	}
	a.want(http.StatusOK, http.MethodPost, "/v1/responses", map[string]any{
		"previous_response_id": first.ID,
		"input":                []map[string]any{{"role": "user", "content": []map[string]string{{"type": "input_text", "text": "which word?"}}}},
	}, &second)
	if second.OutputText != "second answer" || !strings.HasPrefix(second.ID, "resp_2_") || strings.TrimPrefix(second.ID, "resp_2_") != strings.TrimPrefix(first.ID, "resp_1_") {
		t.Fatalf("second response %+v after %s", second, first.ID)
	}
	if body := string(model.Requests()[1].Raw); !strings.Contains(body, "lantern") || !strings.Contains(body, "which word?") {
		t.Errorf("the second turn does not continue the first: %.400s", body)
	}
}

// TestTerminatedTurn: a turn whose workflow is terminated (by an operator,
// say) without recording its end shows as terminated: its event stream
// ends, GET says so, a chat completion waiting on it gets a 502, and its
// session can be deleted afterwards, not before.
func TestTerminatedTurn(t *testing.T) {
	model := fakellm.New(fakellm.Step{Hang: true}, fakellm.Step{Hang: true})
	defer model.Close()
	a := startTurnAPI(t, model)
	var started runStarted
	a.want(http.StatusAccepted, http.MethodPost, "/v1/runs", map[string]any{"input": "hang", "session_id": "term"}, &started)
	if err := model.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	status, data := a.do(http.MethodDelete, "/api/sessions/term", nil)
	if status != http.StatusConflict || apiErrorOf(t, data).Code != "session_busy" {
		t.Fatalf("DELETE a session with a running turn: %d %s", status, data)
	}
	turnID, _, _ := parseRunID(runPrefix, started.RunID)
	if err := a.rt.Client.TerminateWorkflow(t.Context(), turnID, "", "an operator ended it"); err != nil {
		t.Fatal(err)
	}
	r := a.waitFor("/v1/runs/"+started.RunID, 30*time.Second, func(r run) bool { return r.EndedAt != nil })
	if r.Status != "terminated" {
		t.Errorf("run = %+v, want terminated", r)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, a.url+"/v1/runs/"+started.RunID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+storeAPIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body) // ends: the stream closes after done
	resp.Body.Close()
	if err != nil || !strings.Contains(string(body), "event: done\ndata: {\"stop_reason\":\"terminated\"}") {
		t.Errorf("events of a terminated turn: %v\n%s", err, body)
	}

	// A chat completion whose turn is terminated: a 502 turn_error.
	done := make(chan struct{})
	go func() {
		defer close(done)
		status, data = a.do(http.MethodPost, "/v1/chat/completions", map[string]any{
			"messages": []map[string]string{{"role": "user", "content": "hang too"}}})
	}()
	if err := model.WaitRequests(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	running, err := a.rt.Store.RunningTurns(t.Context(), 10)
	if err != nil {
		t.Fatal(err)
	}
	completion := ""
	for _, tr := range running {
		if tr.SessionID != "term" {
			completion = tr.ID
		}
	}
	if completion == "" {
		t.Fatalf("no running turn of the completion among %+v", running)
	}
	if err := a.rt.Client.TerminateWorkflow(t.Context(), completion, "", "an operator ended it"); err != nil {
		t.Fatal(err)
	}
	<-done
	if status != http.StatusBadGateway || apiErrorOf(t, data).Code != "terminated" {
		t.Errorf("a completion whose turn was terminated: %d %s", status, data)
	}
	a.want(http.StatusOK, http.MethodDelete, "/api/sessions/term", nil, nil)
}

// TestClientDisconnect: a chat completion whose client goes away leaves
// its turn running (it is durable); with X-Talaria-Stop-On-Disconnect the
// turn is interrupted.
func TestClientDisconnect(t *testing.T) {
	model := fakellm.New(fakellm.Step{Hang: true}, fakellm.Step{Hang: true})
	defer model.Close()
	a := startTurnAPI(t, model)
	for i, stop := range []bool{false, true} {
		ctx, cancel := context.WithCancel(t.Context())
		body := strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hang"}]}`)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.url+"/v1/chat/completions", body)
		req.Header.Set("Authorization", "Bearer "+storeAPIKey)
		if stop {
			req.Header.Set("X-Talaria-Stop-On-Disconnect", "1")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		runID := resp.Header.Get("X-Talaria-Run-Id")
		if err := model.WaitRequests(t.Context(), i+1); err != nil {
			t.Fatal(err)
		}
		cancel()
		resp.Body.Close()
		if !stop {
			time.Sleep(500 * time.Millisecond) // room for a wrong interrupt to show
			var r run
			a.want(http.StatusOK, http.MethodGet, "/v1/runs/"+runID, nil, &r)
			if r.Status != "running" {
				t.Fatalf("after the client went away the run is %+v, want running", r)
			}
			a.want(http.StatusAccepted, http.MethodPost, "/v1/runs/"+runID+"/stop", nil, nil)
		}
		r := a.waitFor("/v1/runs/"+runID, 30*time.Second, func(r run) bool { return r.EndedAt != nil })
		if r.Status != "interrupted" {
			t.Fatalf("stop=%v: run %+v, want interrupted", stop, r)
		}
	}
}

// TestChatTurnsDenyDangerousCommands: an OpenAI client cannot answer an
// approval, so a chat completion's dangerous command is refused at once
// (the model is told) and the turn goes on; nothing waits.
func TestChatTurnsDenyDangerousCommands(t *testing.T) {
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "rm1", Name: "terminal", Arguments: `{"command":"rm -rf ./keep"}`}),
		fakellm.TextStep("I was not allowed to delete it."),
	)
	defer model.Close()
	a := startTurnAPI(t, model)
	// A completion that waited for an approval would wait for its timeout
	// (five minutes): it is given up after two.
	giveUp, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(giveUp, http.MethodPost, a.url+"/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"delete keep"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+storeAPIKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the completion did not answer within two minutes (did it wait for an approval?): %v", err)
	}
	defer resp.Body.Close()
	var c completion
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("completion: %d %v", resp.StatusCode, err)
	}
	if len(c.Choices) != 1 || deref(c.Choices[0].Message.Content) != "I was not allowed to delete it." {
		t.Fatalf("completion %+v", c)
	}
	reqs := model.Requests()
	if body := string(reqs[len(reqs)-1].Raw); !strings.Contains(strings.ToLower(body), "denied") && !strings.Contains(strings.ToLower(body), "refused") {
		t.Errorf("the model was not told the command was refused: %.600s", body)
	}
}
