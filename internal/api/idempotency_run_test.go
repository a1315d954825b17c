package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// doKeyed sends a JSON request with the key and an Idempotency-Key
// (header values as given; none for nil) and returns the status, the
// body and the headers of the answer.
func (a *storeAPI) doKeyed(method, path string, keys []string, body any) (int, []byte, http.Header) {
	a.t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		a.t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(a.t.Context(), method, a.url+path, bytes.NewReader(data))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+storeAPIKey)
	req.Header.Set("Content-Type", "application/json")
	for _, k := range keys {
		req.Header.Add(IdempotencyHeader, k)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return resp.StatusCode, out, resp.Header
}

// startKeyedRun posts a run with key and wants a 202.
func (a *storeAPI) startKeyedRun(key string, body map[string]any) runStarted {
	a.t.Helper()
	status, data, _ := a.doKeyed(http.MethodPost, "/v1/runs", []string{key}, body)
	var started runStarted
	if status != http.StatusAccepted || json.Unmarshal(data, &started) != nil || started.RunID == "" {
		a.t.Fatalf("POST /v1/runs with key %q: %d %s", key, status, data)
	}
	return started
}

// wantCode sends a keyed request and wants status with error code code
// (and param, when not empty).
func (a *storeAPI) wantCode(status int, code, param, path string, keys []string, body any) {
	a.t.Helper()
	got, data, _ := a.doKeyed(http.MethodPost, path, keys, body)
	if got != status {
		a.t.Fatalf("POST %s with keys %q: %d %s, want %d", path, keys, got, data, status)
	}
	if e := apiErrorOf(a.t, data); e.Code != code || e.Param != param {
		a.t.Fatalf("POST %s with keys %q: code %q param %q (%s), want %q %q", path, keys, e.Code, e.Param, e.Message, code, param)
	}
}

// TestKeyedRuns: a run posted again with its Idempotency-Key is the same
// run (also once it ended, and with the key quoted); a key sent with
// another request is a 422, another key another run; a malformed key is
// a 400 naming the header; a key in a named session finds its run after
// other turns; a background run retried is the same run.
func TestKeyedRuns(t *testing.T) {
	model := fakellm.New(fakellm.TextStep("first"), fakellm.TextStep("second"), fakellm.TextStep("in ops"),
		fakellm.TextStep("ops again"), fakellm.TextStep("in the background"))
	defer model.Close()
	a := startTurnAPI(t, model)

	first := a.startKeyedRun("order-17", map[string]any{"input": "hello"})
	a.waitFor("/v1/runs/"+first.RunID, 30*time.Second, func(r run) bool { return r.Status == "completed" })
	again := a.startKeyedRun(`"order-17"`, map[string]any{"input": "hello"})
	if again.RunID != first.RunID || again.SessionID != first.SessionID || again.Status != "completed" {
		t.Fatalf("retried: %+v, first %+v", again, first)
	}
	a.wantCode(422, "idempotency_key_reused", "", "/v1/runs", []string{"order-17"}, map[string]any{"input": "hello there"})
	a.wantCode(422, "idempotency_key_reused", "", "/v1/runs", []string{"order-17"}, map[string]any{"input": "hello", "max_iterations": 3})
	a.wantCode(422, "idempotency_key_reused", "", "/v1/runs", []string{"order-17"}, map[string]any{"input": "hello", "background": true})

	second := a.startKeyedRun("order-18", map[string]any{"input": "hello"})
	if second.RunID == first.RunID || second.SessionID == first.SessionID {
		t.Fatalf("another key gave %+v, the first %+v", second, first)
	}
	a.waitFor("/v1/runs/"+second.RunID, 30*time.Second, func(r run) bool { return r.Status == "completed" })

	for _, keys := range [][]string{{""}, {strings.Repeat("k", 256)}, {"clé"}, {"a", "b"}} {
		a.wantCode(400, "invalid_idempotency_key", IdempotencyHeader, "/v1/runs", keys, map[string]any{"input": "hello"})
	}
	a.wantCode(400, "invalid_mode", "mode", "/v1/runs", []string{"steer-1"}, map[string]any{"input": "hello", "session_id": "ops", "mode": "steer"})

	// In a named session: found again after the session's next turn.
	ops := a.startKeyedRun("ops-1", map[string]any{"input": "in ops", "session_id": "ops"})
	a.waitFor("/v1/runs/"+ops.RunID, 30*time.Second, func(r run) bool { return r.Status == "completed" })
	var next runStarted
	a.want(http.StatusAccepted, http.MethodPost, "/v1/runs", map[string]any{"input": "ops again", "session_id": "ops"}, &next)
	a.waitFor("/v1/runs/"+next.RunID, 30*time.Second, func(r run) bool { return r.Status == "completed" })
	if got := a.startKeyedRun("ops-1", map[string]any{"input": "in ops", "session_id": "ops"}); got.RunID != ops.RunID {
		t.Fatalf("the key in session ops gave %s, want %s", got.RunID, ops.RunID)
	}

	bg := a.startKeyedRun("bg-1", map[string]any{"input": "in the background", "background": true})
	if got := a.startKeyedRun("bg-1", map[string]any{"input": "in the background", "background": true}); got.RunID != bg.RunID {
		t.Fatalf("the background run retried is %s, want %s", got.RunID, bg.RunID)
	}
	a.wantCode(422, "idempotency_key_reused", "", "/v1/runs", []string{"bg-1"}, map[string]any{"input": "in the background", "deliver": []string{"home"}})
	a.wantCode(422, "idempotency_key_reused", "", "/v1/runs", []string{"bg-1"}, map[string]any{"input": "in the background"})
	a.waitFor("/v1/runs/"+bg.RunID, 30*time.Second, func(r run) bool { return r.Status == "completed" })

	if n := len(model.Requests()); n != 5 {
		t.Fatalf("%d model requests, want 5: one per run", n)
	}
}

// TestKeyedChat: a chat completion retried with its key answers from the
// same turn, streamed or not; its system message reached the model before
// the question; another conversation under the key is a 422; an image is
// a 400 naming its part.
func TestKeyedChat(t *testing.T) {
	model := fakellm.New(fakellm.TextStep("Bonjour."))
	defer model.Close()
	a := startTurnAPI(t, model)
	body := map[string]any{"model": "talaria", "messages": []map[string]any{
		{"role": "system", "content": "Answer in French."},
		{"role": "user", "content": "Hi, I am Ada."}, {"role": "assistant", "content": "Hello Ada."},
		{"role": "user", "content": "Say hello."},
	}}
	status, data, h := a.doKeyed(http.MethodPost, "/v1/chat/completions", []string{"chat-1"}, body)
	var c completion
	if status != http.StatusOK || json.Unmarshal(data, &c) != nil || len(c.Choices) != 1 || *c.Choices[0].Message.Content != "Bonjour." {
		t.Fatalf("completion: %d %s", status, data)
	}
	status, data, h2 := a.doKeyed(http.MethodPost, "/v1/chat/completions", []string{"chat-1"}, body)
	var c2 completion
	if status != http.StatusOK || json.Unmarshal(data, &c2) != nil || c2.ID != c.ID || *c2.Choices[0].Message.Content != "Bonjour." ||
		h2.Get("X-Talaria-Session-Id") != h.Get("X-Talaria-Session-Id") {
		t.Fatalf("retried: %d %s (first %s)", status, data, c.ID)
	}
	body["stream"] = true
	status, data, _ = a.doKeyed(http.MethodPost, "/v1/chat/completions", []string{"chat-1"}, body)
	if status != http.StatusOK || !strings.Contains(string(data), `"id":"`+c.ID+`"`) || !strings.Contains(string(data), "Bonjour.") {
		t.Fatalf("retried streaming: %d %s", status, data)
	}
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("%d model requests, want 1", n)
	}
	sent := model.Requests()[0].Body.Messages
	last := sent[len(sent)-1].Content
	if !strings.HasPrefix(last, instructionsOpen+"\nAnswer in French.\n"+instructionsClose) || !strings.HasSuffix(last, "Say hello.") {
		t.Errorf("the turn's message to the model: %q", last)
	}
	if got := sent[len(sent)-3].Content + "|" + sent[len(sent)-2].Content; got != "Hi, I am Ada.|Hello Ada." {
		t.Errorf("the conversation before it: %q", got)
	}

	body["messages"] = []map[string]any{{"role": "user", "content": "Hi, I am Bob."}, {"role": "user", "content": "Say hello."}}
	a.wantCode(422, "idempotency_key_reused", "", "/v1/chat/completions", []string{"chat-1"}, body)
	body["messages"] = []map[string]any{{"role": "user", "content": []map[string]any{
		{"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": map[string]string{"url": "data:image/png;base64,AAAA"}}}}}
	a.wantCode(400, "unsupported_image", "messages[0].content[1].image_url.url", "/v1/chat/completions", nil, body)
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("%d model requests, want 1", n)
	}
}
