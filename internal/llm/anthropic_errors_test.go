package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

func TestAnthropicErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		step    fakellm.Step
		stream  bool
		class   turnapi.ErrorClass
		status  int
		retry   time.Duration
		message string
	}{
		{name: "rate limit", step: fakellm.Step{Status: 429, ErrorMessage: "slow down", RetryAfter: "5"},
			class: turnapi.ClassRateLimit, status: 429, retry: 5 * time.Second, message: "slow down"},
		{name: "rate limit streamed", step: fakellm.Step{Status: 429, ErrorMessage: "slow down", RetryAfter: "5"}, stream: true,
			class: turnapi.ClassRateLimit, status: 429, retry: 5 * time.Second},
		{name: "overloaded", step: fakellm.Step{Status: 529, ErrorMessage: "Overloaded"}, stream: true,
			class: turnapi.ClassOverloaded, status: 529, message: "Overloaded"},
		{name: "auth", step: fakellm.Step{Status: 401, ErrorMessage: "invalid x-api-key"},
			class: turnapi.ClassAuth, status: 401, message: "invalid x-api-key"},
		{name: "permission", step: fakellm.ErrorStep(403, "not allowed"), class: turnapi.ClassAuth, status: 403},
		{name: "prompt too long", step: fakellm.ErrorStep(400, "prompt is too long: 210000 tokens > 200000 maximum"),
			class: turnapi.ClassContextOverflow, status: 400},
		{name: "credit", step: fakellm.ErrorStep(400, "Your credit balance is too low to access the Anthropic API."),
			class: turnapi.ClassBilling, status: 400},
		{name: "billing", step: fakellm.ErrorStep(402, "payment required"), class: turnapi.ClassBilling, status: 402},
		{name: "model", step: fakellm.ErrorStep(404, "model: claude-test"), class: turnapi.ClassModelNotFound, status: 404},
		{name: "server", step: fakellm.ErrorStep(500, "Internal server error"), class: turnapi.ClassServer, status: 500},
		{name: "bad request", step: fakellm.ErrorStep(400, "messages: bad"), class: turnapi.ClassBadRequest, status: 400},
		{name: "html page", step: fakellm.HTMLStep("Bad Gateway"), class: turnapi.ClassInvalidResponse, status: 200},
		{name: "html page streamed", step: fakellm.HTMLStep("Bad Gateway"), stream: true, class: turnapi.ClassInvalidResponse, status: 200},
		{name: "html error page", step: fakellm.Step{Status: 502, Body: "<html><body>Bad Gateway</body></html>"},
			class: turnapi.ClassServer, status: 502, message: "<html><body>Bad Gateway</body></html>"},
		{name: "malformed json", step: fakellm.Step{Body: `{"id": "msg_1", "content": [`, ContentType: "application/json"},
			class: turnapi.ClassInvalidResponse, status: 200},
		{name: "cut json", step: fakellm.Step{Text: "hello", EndAfterChunks: 1}, class: turnapi.ClassInvalidResponse, status: 200},
		{name: "chat stream at the messages endpoint", stream: true, class: turnapi.ClassInvalidResponse, status: 200,
			step: fakellm.Step{Body: "data: {\"choices\":[]}\n\ndata: [DONE]\n\n", ContentType: "text/event-stream"}},
		{name: "garbage events", stream: true, class: turnapi.ClassInvalidResponse, status: 200,
			step: fakellm.Step{Body: "event: message_start\ndata: {not json\n\n", ContentType: "text/event-stream"}},
		{name: "truncated stream", step: fakellm.Step{Text: "one two three four", EndAfterChunks: 3}, stream: true,
			class: turnapi.ClassTruncatedReply},
		{name: "broken stream", step: fakellm.Step{Text: "one two three four", BreakAfterChunks: 3}, stream: true,
			class: turnapi.ClassTruncatedReply},
		{name: "error event", stream: true, class: turnapi.ClassOverloaded, status: 529, message: "Overloaded",
			step: fakellm.Step{ContentType: "text/event-stream", Body: "event: message_start\ndata: " +
				`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":1,"output_tokens":1}}}` +
				"\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, e := anthropicServer(t, tc.step)
			_, err := Call(context.Background(), e, request(), Options{Stream: tc.stream})
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not *Error", err)
			}
			if ce.Class != tc.class || ce.Status != tc.status || ce.RetryAfter != tc.retry {
				t.Fatalf("got class=%s status=%d retry=%v, want %s %d %v (%v)", ce.Class, ce.Status, ce.RetryAfter,
					tc.class, tc.status, tc.retry, err)
			}
			if tc.message != "" && ce.Message != tc.message {
				t.Fatalf("message = %q, want %q", ce.Message, tc.message)
			}
			if tc.class == turnapi.ClassTruncatedReply && !strings.HasPrefix("one two three four", ce.Streamed) {
				t.Fatalf("streamed = %q", ce.Streamed)
			}
			if tc.name == "truncated stream" && ce.Streamed == "" {
				t.Fatal("the text received so far was lost")
			}
			if n := len(srv.Requests()); n != 1 {
				t.Fatalf("%d requests: the client retried by itself", n)
			}
		})
	}
}

func TestAnthropicWrongKey(t *testing.T) {
	t.Parallel()
	_, e := anthropicServer(t)
	e.APIKey = "wrong"
	_, err := Call(context.Background(), e, request(), Options{})
	var ce *Error
	if !errors.As(err, &ce) || ce.Class != turnapi.ClassAuth || ce.Status != 401 {
		t.Fatalf("err = %v", err)
	}
}

func TestAnthropicCancelled(t *testing.T) {
	t.Parallel()
	_, e := anthropicServer(t, fakellm.Step{Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := Call(ctx, e, request(), Options{Stream: true})
	var ce *Error
	if !errors.As(err, &ce) || ce.Class != turnapi.ClassCancelled {
		t.Fatalf("err = %v", err)
	}
}

// TestAnthropicRepairsConversation sends what another wire format left
// behind: ids the API does not accept, a call without its result, a
// result without its call, a conversation that starts with the
// assistant, same-role runs, empty text and a prefill ending in white
// space. The fake checks the request as the API does.
func TestAnthropicRepairsConversation(t *testing.T) {
	t.Parallel()
	srv, e := anthropicServer(t, fakellm.TextStep("fine"))
	call := func(id, args string) openai.ToolCall {
		return openai.ToolCall{ID: id, Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: args}}
	}
	req := Request{Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "sys one"},
		{Role: "assistant", Content: "Hello, how can I help?"},
		{Role: "user", Content: "read a and b"},
		{Role: "user", Content: "   "},
		{Role: "assistant", Content: "", ToolCalls: []openai.ToolCall{call("functions.read_file:0", `{"path":"a"}`), call("call b", `[1,2]`)}},
		{Role: "tool", ToolCallID: "functions.read_file:0", Content: "a says hi"},
		{Role: "tool", ToolCallID: "ghost", Content: "nobody asked"},
		{Role: "system", Content: "sys two"},
		{Role: "user", Content: "and now?"},
		{Role: "assistant", Content: "Here is the answer:\n\n"},
	}}
	if _, err := Call(context.Background(), e, req, Options{}); err != nil {
		t.Fatalf("repaired request refused: %v", err)
	}
	got := srv.Requests()[0].Body.Messages
	var roles []string
	for _, m := range got {
		roles = append(roles, m.Role)
	}
	wantRoles := "system user assistant user assistant tool tool user assistant"
	if strings.Join(roles, " ") != wantRoles {
		t.Fatalf("roles = %v, want %s", roles, wantRoles)
	}
	if got[0].Content != "sys one\n\nsys two" || got[1].Content != anthropicOpening || got[len(got)-1].Content != "Here is the answer:" {
		t.Fatalf("messages = %+v", got)
	}
	calls := got[4].ToolCalls
	if len(calls) != 2 || calls[0].ID != anthropicToolID("functions.read_file:0") || calls[1].Function.Arguments != "{}" {
		t.Fatalf("calls = %+v", calls)
	}
	if got[5].ToolCallID != calls[0].ID || got[5].Content != "a says hi" || got[6].ToolCallID != calls[1].ID ||
		got[6].Content != missingOutput {
		t.Fatalf("results = %+v / %+v", got[5], got[6])
	}
}

func TestAnthropicToolID(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, id := range []string{"toolu_01", "call-2", "functions.read:0", "functions_read_0", "functions:read:0", "", "é"} {
		got := anthropicToolID(id)
		if got == "" || strings.Trim(got, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Fatalf("anthropicToolID(%q) = %q does not fit the pattern", id, got)
		}
		if other, dup := seen[got]; dup {
			t.Fatalf("%q and %q both map to %q", id, other, got)
		}
		seen[got] = id
		if got != anthropicToolID(id) {
			t.Fatal("the mapping is not deterministic")
		}
	}
	if anthropicToolID("toolu_01") != "toolu_01" {
		t.Fatal("a valid id was changed")
	}
}

func TestAnthropicReplayIgnoresGarbage(t *testing.T) {
	t.Parallel()
	for _, data := range []string{`not json`, `[{"type":"thinking","thinking":"no signature"}]`, `[{"type":"other"}]`} {
		if blocks := replayedThinking(json.RawMessage(data)); len(blocks) != 0 {
			t.Fatalf("replayedThinking(%s) = %d blocks", data, len(blocks))
		}
	}
}
