package e2e

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/models"
)

// postKeyed posts a run with an Idempotency-Key and returns the status
// and the answer (run_id, session_id, status; or the error).
func postKeyed(t *testing.T, base, key string, body map[string]any) (int, map[string]any) {
	t.Helper()
	var out map[string]any
	status := apiCallWith(t, http.MethodPost, base+"/v1/runs", body, &out, http.Header{"Idempotency-Key": {key}})
	return status, out
}

// keyedRun posts a run with key and wants a 202; it returns the run id
// and session.
func keyedRun(t *testing.T, base, key string, body map[string]any) (string, string) {
	t.Helper()
	status, out := postKeyed(t, base, key, body)
	id, _ := out["run_id"].(string)
	session, _ := out["session_id"].(string)
	if status != http.StatusAccepted || id == "" {
		t.Fatalf("POST /v1/runs with key %q: %d %v", key, status, out)
	}
	return id, session
}

// sessionTurns are the turns the store holds for session.
func sessionTurns(t *testing.T, u *user, session string) []models.Turn {
	t.Helper()
	store, err := models.Open(t.Context(), u.home+"/talaria.db")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	turns, err := store.Turns(t.Context(), session)
	if err != nil {
		t.Fatal(err)
	}
	return turns
}

// sessionsStartingWith counts the sessions whose first message is text.
func sessionsStartingWith(t *testing.T, base, text string) int {
	t.Helper()
	var page struct {
		Data []struct {
			FirstMessage string `json:"first_message"`
		} `json:"data"`
	}
	if status := apiCall(t, http.MethodGet, base+"/api/sessions?limit=200", nil, &page); status != http.StatusOK {
		t.Fatalf("GET /api/sessions: %d", status)
	}
	n := 0
	for _, s := range page.Data {
		if s.FirstMessage == text {
			n++
		}
	}
	return n
}

// TestIdempotentRunAcrossKill: POST /v1/runs with an Idempotency-Key is
// cut twice, once by SIGKILL of serve while the request waits (its
// message queued behind a running turn), once by the client going away
// right after sending; each retry with the same key, after the restart,
// gets the one run its first attempt made: the store holds no second
// turn and the model saw one request per run. The same key with another
// body is a 422, another key another run, a malformed key a 400 naming
// the header.
func TestIdempotentRunAcrossKill(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a server")
	}
	t.Parallel()
	model := fakellm.New(
		fakellm.Step{Hang: true},             // the session's running turn, in flight when serve dies
		fakellm.TextStep("First task done."), // its model call again, after the restart
		fakellm.TextStep("Keyed task done."),
		fakellm.TextStep("Fresh task done."),
		fakellm.TextStep("Another key, another run."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	u.env["TALARIA_HEARTBEAT_TIMEOUT"] = "3s"
	port := freePort(t)
	s, base := u.apiServeOn(port)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// 1. Serve killed while the keyed request waits for its queued turn.
	first, _ := startRun(t, base, map[string]any{"input": "a long first task", "session_id": "idem"})
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	keyedBody := map[string]any{"input": "the keyed task", "session_id": "idem", "mode": "queue"}
	cut := make(chan error, 1)
	go func() {
		_, err := postRaw(ctx, base+"/v1/runs", keyedBody, http.Header{"Idempotency-Key": {"key-A"}})
		cut <- err
	}()
	waitFor(t, time.Minute, func() bool {
		out, _, _ := u.run(time.Minute, "status", "idem")
		return strings.Contains(out, "queued 1: the keyed task")
	})
	s.kill()
	if err := <-cut; err == nil {
		t.Fatal("the keyed request got an answer from a killed serve")
	}
	_, base = u.apiServeOn(port)
	id, session := keyedRun(t, base, "key-A", keyedBody)
	if want := "run_2_idem"; id != want || session != "idem" {
		t.Fatalf("the retry's run is %s in %s, want %s: the queued message's turn", id, session, want)
	}
	r := waitRun(t, base, id, time.Minute, func(r runInfo) bool { return r.Status == "completed" })
	if r.FinalText == nil || *r.FinalText != "Keyed task done." {
		t.Fatalf("run %+v", r)
	}
	waitRun(t, base, first, time.Minute, func(r runInfo) bool { return r.Status == "completed" })
	if again, _ := keyedRun(t, base, "key-A", keyedBody); again != id {
		t.Fatalf("retried once more: %s, want %s", again, id)
	}
	if turns := sessionTurns(t, u, "idem"); len(turns) != 2 {
		t.Fatalf("session idem holds %d turns, want 2 (the first task and the keyed one)", len(turns))
	}
	if status := apiCall(t, http.MethodGet, base+"/v1/runs/run_3_idem", nil, nil); status != http.StatusNotFound {
		t.Fatalf("GET run_3_idem: %d, want 404", status)
	}
	if n := len(model.Requests()); n != 3 {
		t.Fatalf("the model saw %d requests, want 3 (the hung call, its retry, the keyed turn)", n)
	}

	// 2. The client goes away right after sending a run of a new session.
	freshBody := map[string]any{"input": "a fresh task"}
	cctx, ccancel := context.WithCancel(ctx)
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { ccancel() }}
	_, err := postRaw(httptrace.WithClientTrace(cctx, trace), base+"/v1/runs", freshBody, http.Header{"Idempotency-Key": {"key-B"}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the cut request: %v, want it cancelled", err)
	}
	fresh, freshSession := keyedRun(t, base, "key-B", freshBody)
	waitRun(t, base, fresh, time.Minute, func(r runInfo) bool { return r.Status == "completed" })
	if again, _ := keyedRun(t, base, "key-B", freshBody); again != fresh {
		t.Fatalf("retried once more: %s, want %s", again, fresh)
	}
	if turns := sessionTurns(t, u, freshSession); len(turns) != 1 {
		t.Fatalf("session %s holds %d turns, want 1", freshSession, len(turns))
	}
	if n := sessionsStartingWith(t, base, "a fresh task"); n != 1 {
		t.Fatalf("%d sessions begin with the fresh task, want 1", n)
	}

	// 3. The same key with another body; another key; a malformed key.
	if status, out := postKeyed(t, base, "key-B", map[string]any{"input": "a different task"}); status != http.StatusUnprocessableEntity ||
		!strings.Contains(errorCode(out), "idempotency_key_reused") {
		t.Fatalf("the key with another body: %d %v, want 422", status, out)
	}
	other, otherSession := keyedRun(t, base, "key-C", freshBody)
	if other == fresh || otherSession == freshSession {
		t.Fatalf("another key gave run %s in %s, the same as key-B's", other, otherSession)
	}
	waitRun(t, base, other, time.Minute, func(r runInfo) bool { return r.Status == "completed" })
	if status, out := postKeyed(t, base, strings.Repeat("x", 256), freshBody); status != http.StatusBadRequest ||
		!strings.Contains(errorField(out, "param"), "Idempotency-Key") {
		t.Fatalf("a malformed key: %d %v, want a 400 naming the header", status, out)
	}
	if n := len(model.Requests()); n != 5 {
		t.Fatalf("the model saw %d requests, want 5: one per run", n)
	}
}

// TestIdempotentChatStream: through the official OpenAI SDK, a streamed
// completion cut after its first chunks and retried with its
// Idempotency-Key streams the same run whole (the model is asked once);
// its system message reached the model before the question; an image is
// refused with a 400 naming the part.
func TestIdempotentChatStream(t *testing.T) {
	t.Parallel()
	reply := "One, two, three, four, five, six, seven, eight."
	slow := fakellm.TextStep(reply)
	slow.ChunkSize, slow.ChunkDelay = 4, 100*time.Millisecond
	model := fakellm.New(slow)
	defer model.Close()
	u := newUser(t, model.URL())
	_, base := u.apiServe()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := sdkClient(base, testAPIKey)
	params := openaisdk.ChatCompletionNewParams{Model: "talaria", Messages: []openaisdk.ChatCompletionMessageParamUnion{
		openaisdk.SystemMessage("Count in English."), openaisdk.UserMessage("Count to eight."),
	}}
	key := option.WithHeader("Idempotency-Key", "count-1")

	cctx, ccancel := context.WithCancel(ctx)
	stream := client.Chat.Completions.NewStreaming(cctx, params, key)
	firstID, got := "", ""
	for stream.Next() {
		ch := stream.Current()
		firstID = ch.ID
		if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			got += ch.Choices[0].Delta.Content
			break
		}
	}
	ccancel()
	stream.Close()
	if got == "" || got == reply {
		t.Fatalf("the first stream gave %q before the cut, want part of the reply", got)
	}

	stream = client.Chat.Completions.NewStreaming(ctx, params, key)
	acc := openaisdk.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("retried stream: %v", err)
	}
	if acc.ID != firstID || len(acc.Choices) == 0 || acc.Choices[0].Message.Content != reply {
		t.Fatalf("retried stream: id %s (first %s), content %+v", acc.ID, firstID, acc.Choices)
	}
	reqs := model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the model saw %d requests, want 1", len(reqs))
	}
	sent := reqs[0].Body.Messages
	want := "[System message sent with this request]\nCount in English.\n[End of the system message]\n\nCount to eight."
	if last := sent[len(sent)-1]; last.Role != "user" || last.Content != want {
		t.Fatalf("the turn's message to the model: %s %q, want %q", last.Role, last.Content, want)
	}

	_, err := client.Chat.Completions.New(ctx, openaisdk.ChatCompletionNewParams{Model: "talaria",
		Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage([]openaisdk.ChatCompletionContentPartUnionParam{
			openaisdk.TextContentPart("What is in this picture?"),
			openaisdk.ImageContentPart(openaisdk.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64,bm90IGEgcGljdHVyZQ=="}),
		})}})
	var apiErr *openaisdk.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Param != "messages[0].content[1].image_url.url" {
		t.Fatalf("a picture that is not one: %v, want a 400 naming messages[0].content[1].image_url.url", err)
	}
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("the model saw %d requests, want 1", n)
	}
}
