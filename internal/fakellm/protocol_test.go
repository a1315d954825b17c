package fakellm_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestEndAfterChunks: a stream ends cleanly after the given content chunks,
// with no finish chunk and no [DONE]; a JSON answer is a complete body of
// malformed JSON.
func TestEndAfterChunks(t *testing.T) {
	t.Parallel()
	s := startServer(t,
		fakellm.Step{Text: "partial answer that goes on", EndAfterChunks: 2},
		fakellm.Step{Text: "whole answer", EndAfterChunks: 1},
	)
	ctx := testCtx(t)
	req := chatRequest("hi")
	req.Stream = true
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(mustJSON(t, req)))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("the stream did not end cleanly: %v", err)
	}
	text := string(body)
	if strings.Contains(text, "[DONE]") || strings.Contains(text, `"finish_reason":"stop"`) {
		t.Fatalf("the cut stream carries its end:\n%s", text)
	}
	if n := strings.Count(text, "data: "); n != 3 { // role chunk and two content chunks
		t.Fatalf("%d events, want 3:\n%s", n, text)
	}

	c := newClient(t, s, "k")
	if _, err := callJSON(ctx, c); err == nil {
		t.Fatal("a JSON answer cut in half decoded")
	}
	if err := s.WaitFinished(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Requests() {
		if !r.Broken || r.Cancelled || r.Status != 200 {
			t.Errorf("record %s, want Broken with status 200", flags(r))
		}
	}
}

// TestRawBody: a step's Body is the whole answer, with its status and
// content type, for streamed and plain requests alike.
func TestRawBody(t *testing.T) {
	t.Parallel()
	page := fakellm.HTMLStep("502 Bad Gateway")
	s := startServer(t, page,
		fakellm.Step{Body: "data: not json at all\n\n", ContentType: "text/event-stream"},
		fakellm.Step{Body: "<html>down</html>", Status: 503},
	)
	for i, tt := range []struct {
		stream      bool
		status      int
		contentType string
		body        string
	}{
		{false, 200, "text/html; charset=utf-8", page.Body},
		{true, 200, "text/event-stream", "data: not json at all\n\n"},
		{false, 503, "text/html; charset=utf-8", "<html>down</html>"},
	} {
		req := chatRequest("hi")
		req.Stream = tt.stream
		resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(mustJSON(t, req)))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != tt.contentType || string(body) != tt.body {
			t.Errorf("answer %d: %d %q %q", i, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	if !strings.HasPrefix(page.Body, "<!DOCTYPE html>") || !strings.Contains(page.Body, "502 Bad Gateway") {
		t.Fatalf("HTMLStep body %q", page.Body)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
