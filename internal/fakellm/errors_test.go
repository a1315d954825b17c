package fakellm_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

func TestErrorStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		step    fakellm.Step
		status  int
		message string
		errType string
		code    any
		retry   string
	}{
		{
			name:    "rate limited with retry-after",
			step:    fakellm.Step{Status: 429, ErrorMessage: "slow down", RetryAfter: "2"},
			status:  429,
			message: "slow down",
			errType: "requests",
			code:    "rate_limit_exceeded",
			retry:   "2",
		},
		{
			name:    "server error defaults",
			step:    fakellm.ErrorStep(503, ""),
			status:  503,
			message: "fakellm: scripted error: Service Unavailable",
			errType: "server_error",
			code:    0, // go-openai decodes a null code as the integer 0
		},
		{
			name:    "custom type and code",
			step:    fakellm.Step{Status: 400, ErrorMessage: "too long", ErrorType: "invalid_request_error", ErrorCode: "context_length_exceeded"},
			status:  400,
			message: "too long",
			errType: "invalid_request_error",
			code:    "context_length_exceeded",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, tc.step, tc.step)
			c := newClient(t, s, "k")
			ctx := testCtx(t)
			check := func(mode string, err error) {
				t.Helper()
				var apiErr *openai.APIError
				if !errors.As(err, &apiErr) {
					t.Fatalf("%s: error %v (%T), want *openai.APIError", mode, err, err)
				}
				if apiErr.HTTPStatusCode != tc.status || apiErr.Message != tc.message || apiErr.Type != tc.errType || apiErr.Code != tc.code {
					t.Errorf("%s: got status %d message %q type %q code %v", mode, apiErr.HTTPStatusCode, apiErr.Message, apiErr.Type, apiErr.Code)
				}
			}
			_, err := c.CreateChatCompletion(ctx, chatRequest("hi"))
			check("json", err)
			_, err = c.CreateChatCompletionStream(ctx, chatRequest("hi"))
			check("stream", err)

			// The header is checked with a raw request.
			s.Push(tc.step)
			resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
			if err != nil {
				t.Fatalf("raw request: %v", err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("raw status %d", resp.StatusCode)
			}
			if got := resp.Header.Get("Retry-After"); got != tc.retry {
				t.Errorf("Retry-After %q, want %q", got, tc.retry)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			var body struct {
				Error map[string]any `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatalf("decode error body: %v", err)
			}
			for _, key := range []string{"message", "type", "param", "code"} {
				if _, ok := body.Error[key]; !ok {
					t.Errorf("error body lacks %q: %v", key, body.Error)
				}
			}
		})
	}
}

func TestScriptExhausted(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.TextStep("only one"))
	c := newClient(t, s, "k")
	ctx := testCtx(t)
	if _, err := c.CreateChatCompletion(ctx, chatRequest("a")); err != nil {
		t.Fatalf("first: %v", err)
	}
	_, err := c.CreateChatCompletion(ctx, chatRequest("b"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || apiErr.Code != "script_exhausted" ||
		!strings.Contains(apiErr.Message, "script exhausted") {
		t.Fatalf("got %v, want a 500 script_exhausted APIError", err)
	}
	if err := s.WaitFinished(ctx, 2); err != nil {
		t.Fatal(err)
	}
	got := s.Requests()
	if len(got) != 2 || got[0].Exhausted || !got[1].Exhausted || got[1].Status != 500 || got[1].Scripted {
		t.Errorf("records %s", allFlags(got))
	}
}

func TestAPIKey(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.WithAPIKey("right"), fakellm.TextStep("ok"))
	ctx := testCtx(t)

	_, err := newClient(t, s, "wrong").CreateChatCompletion(ctx, chatRequest("hi"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 || apiErr.Code != "invalid_api_key" {
		t.Fatalf("wrong key: got %v, want 401 invalid_api_key", err)
	}
	if _, err := newClient(t, s, "wrong").ListModels(ctx); err == nil {
		t.Error("models listed with a wrong key")
	}
	resp, err := newClient(t, s, "right").CreateChatCompletion(ctx, chatRequest("hi"))
	if err != nil || resp.Choices[0].Message.Content != "ok" {
		t.Fatalf("right key: %v %+v", err, resp)
	}
	got := s.Requests()
	if len(got) != 2 || got[0].Status != 401 || got[0].Scripted || !got[1].Scripted {
		t.Errorf("records %s", allFlags(got))
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.Step{Status: 42})
	tests := []struct {
		name, method, path, body string
		status                   int
		errType                  string
	}{
		{"invalid json", http.MethodPost, "/chat/completions", `{"messages":`, 400, "invalid_request_error"},
		{"invalid scripted status", http.MethodPost, "/chat/completions", `{"model":"m"}`, 500, "server_error"},
		{"unknown path", http.MethodPost, "/completions", `{}`, 404, "invalid_request_error"},
		{"wrong method", http.MethodGet, "/chat/completions", ``, 405, "invalid_request_error"},
		{"unknown model", http.MethodGet, "/models/gpt-nope", ``, 404, "invalid_request_error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(testCtx(t), tc.method, s.URL()+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d (%s)", resp.StatusCode, tc.status, b)
			}
			var body openai.ErrorResponse
			if err := json.Unmarshal(b, &body); err != nil || body.Error == nil || body.Error.Type != tc.errType || body.Error.Message == "" {
				t.Errorf("error body %s (%v)", b, err)
			}
		})
	}
	http.DefaultClient.CloseIdleConnections()
}
