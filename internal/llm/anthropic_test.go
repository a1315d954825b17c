//lint:file-ignore SA1019 max_tokens is the field OpenAI-compatible servers (and these wire formats) read; go-openai deprecates it only for OpenAI's o1 models

package llm

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// modes are the two ways of calling: a JSON answer and a stream.
var modes = []struct {
	name   string
	stream bool
}{{"json", false}, {"stream", true}}

// anthropicServer starts a fake that wants key "k", closed with the test.
func anthropicServer(t *testing.T, steps ...fakellm.Step) (*fakellm.Server, Endpoint) {
	t.Helper()
	srv := fakellm.New(append([]fakellm.Option{fakellm.WithAPIKey("k")}, stepOptions(steps)...)...)
	t.Cleanup(srv.Close)
	return srv, Endpoint{Wire: WireAnthropic, BaseURL: srv.URL(), APIKey: "k", Model: "claude-test"}
}

func stepOptions(steps []fakellm.Step) []fakellm.Option {
	out := make([]fakellm.Option, len(steps))
	for i, st := range steps {
		out[i] = st
	}
	return out
}

// rawBody decodes the body a request was sent with.
func rawBody(t *testing.T, r fakellm.Request) map[string]any {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return body
}

func TestAnthropicTextAndTools(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			srv, e := anthropicServer(t,
				fakellm.Step{Text: "hello there", Reasoning: "thinking it over"},
				fakellm.ToolStep(
					fakellm.ToolCall{ID: "toolu_a", Name: "read_file", Arguments: `{"path":"x.txt","limit":10}`},
					fakellm.ToolCall{ID: "toolu_b", Name: "terminal", Arguments: `{"command":"echo hi"}`},
				),
			)
			var deltas string
			chunks := 0
			opts := Options{Stream: m.stream, OnDelta: func(s string) { deltas += s }, OnChunk: func() { chunks++ }}
			r, err := Call(context.Background(), e, request(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if r.Content != "hello there" || r.Reasoning != "thinking it over" || r.FinishReason != "stop" {
				t.Fatalf("reply = %+v", r)
			}
			if r.Usage.PromptTokens == 0 || r.Usage.CompletionTokens == 0 {
				t.Fatalf("usage = %+v", r.Usage)
			}
			if r.Replay == nil || r.Replay.Wire != WireAnthropic || !strings.Contains(string(r.Replay.Data), `"signature"`) {
				t.Fatalf("replay = %+v", r.Replay)
			}
			if m.stream && (deltas != "hello there" || chunks == 0) {
				t.Fatalf("deltas = %q, chunks = %d", deltas, chunks)
			}

			r, err = Call(context.Background(), e, request(), opts)
			if err != nil {
				t.Fatal(err)
			}
			want := []openai.ToolCall{
				{ID: "toolu_a", Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"x.txt","limit":10}`}},
				{ID: "toolu_b", Type: "function", Function: openai.FunctionCall{Name: "terminal", Arguments: `{"command":"echo hi"}`}},
			}
			if !reflect.DeepEqual(r.ToolCalls, want) || r.FinishReason != "tool_calls" || r.Replay != nil {
				t.Fatalf("reply = %+v", r)
			}

			reqs := srv.Requests()
			if reqs[0].Wire != fakellm.WireAnthropic || reqs[0].Body.Stream != m.stream || reqs[0].Body.Model != "claude-test" ||
				reqs[0].Body.MaxTokens != AnthropicDefaultMaxTokens {
				t.Fatalf("request = %+v", reqs[0].Body)
			}
			if reqs[0].Header.Get("Anthropic-Version") == "" {
				t.Fatal("no anthropic-version header")
			}
		})
	}
}

func TestAnthropicBaseURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                          "https://api.anthropic.com/",
		"https://api.anthropic.com": "https://api.anthropic.com/",
		"https://proxy.example/v1/": "https://proxy.example/",
		"http://127.0.0.1:9/v1":     "http://127.0.0.1:9/",
	} {
		if got := anthropicBaseURL(in); got != want {
			t.Errorf("anthropicBaseURL(%q) = %q, want %q", in, got, want)
		}
	}
	srv, e := anthropicServer(t, fakellm.TextStep("root"))
	e.BaseURL = strings.TrimSuffix(srv.URL(), "/v1")
	if r, err := Call(context.Background(), e, request(), Options{}); err != nil || r.Content != "root" {
		t.Fatalf("call without /v1: %+v, %v", r, err)
	}
}

// toolTurn is a conversation that ends in the results of two tool calls.
func toolTurn(replay map[string]Replay) Request {
	return Request{
		Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "You are terse."},
			{Role: "user", Content: "look at x and y"},
			{Role: "assistant", ToolCalls: []openai.ToolCall{
				{ID: "toolu_a", Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"x"}`}},
				{ID: "toolu_b", Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"y"}`}},
			}},
			{Role: "tool", ToolCallID: "toolu_a", Content: "x is 1"},
			{Role: "tool", ToolCallID: "toolu_b", Content: "y is 2"},
		},
		Tools:  []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: "read_file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}},
		Replay: replay,
	}
}

func TestAnthropicThinkingReplay(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			srv, e := anthropicServer(t,
				fakellm.Step{Reasoning: "I should read both files.", ToolCalls: []fakellm.ToolCall{
					{ID: "toolu_a", Name: "read_file", Arguments: `{"path":"x"}`},
					{ID: "toolu_b", Name: "read_file", Arguments: `{"path":"y"}`},
				}},
				fakellm.TextStep("x is 1, y is 2"),
				fakellm.TextStep("not reached"),
			)
			e.ThinkingBudget = 2048
			opts := Options{Stream: m.stream}
			first, err := Call(context.Background(), e, request(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if first.Replay == nil || len(first.ToolCalls) != 2 {
				t.Fatalf("first reply = %+v", first)
			}
			key := ReplayKey(openai.ChatCompletionMessage{ToolCalls: first.ToolCalls})
			r, err := Call(context.Background(), e, toolTurn(map[string]Replay{key: *first.Replay}), opts)
			if err != nil {
				t.Fatalf("the replayed thinking was refused: %v", err)
			}
			if r.Content != "x is 1, y is 2" {
				t.Fatalf("reply = %+v", r)
			}
			body := rawBody(t, srv.Requests()[1])
			thinking, _ := body["thinking"].(map[string]any)
			if thinking["type"] != "enabled" || thinking["budget_tokens"] != float64(2048) || body["max_tokens"].(float64) <= 2048 {
				t.Fatalf("thinking = %v, max_tokens = %v", body["thinking"], body["max_tokens"])
			}
			msgs := body["messages"].([]any)
			lead := msgs[1].(map[string]any)["content"].([]any)[0].(map[string]any)
			if lead["type"] != "thinking" || lead["thinking"] != "I should read both files." {
				t.Fatalf("assistant message begins with %v", lead)
			}

			// A signature the fake did not issue is refused, as the API does.
			bad := *first.Replay
			bad.Data = json.RawMessage(strings.Replace(string(bad.Data), `"signature":"`, `"signature":"x`, 1))
			_, err = Call(context.Background(), e, toolTurn(map[string]Replay{key: bad}), opts)
			var ce *Error
			if !errors.As(err, &ce) || ce.Class != turnapi.ClassBadRequest || !strings.Contains(ce.Message, "signature") {
				t.Fatalf("tampered signature: %v", err)
			}
		})
	}
}

func TestAnthropicThinkingWithoutReplay(t *testing.T) {
	t.Parallel()
	prefill := toolTurn(nil)
	prefill.Messages = append(prefill.Messages, openai.ChatCompletionMessage{Role: "assistant", Content: "Both files:  \n"})
	other := toolTurn(map[string]Replay{"toolu_a": {Wire: WireResponses, Data: json.RawMessage(`[{"id":"rs_1"}]`)}})
	for name, req := range map[string]Request{"no replay": toolTurn(nil), "replay of another wire": other, "prefill": prefill} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, e := anthropicServer(t, fakellm.TextStep("x is 1, y is 2"))
			e.ThinkingBudget = 2048
			if _, err := Call(context.Background(), e, req, Options{}); err != nil {
				t.Fatalf("request refused: %v", err)
			}
			body := rawBody(t, srv.Requests()[0])
			if _, ok := body["thinking"]; ok {
				t.Fatalf("thinking sent: %v", body["thinking"])
			}
		})
	}
	// A new user message starts a new loop: thinking is back.
	srv, e := anthropicServer(t, fakellm.TextStep("ok"))
	e.ThinkingBudget = 100 // raised to the API's minimum
	req := toolTurn(nil)
	req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: "assistant", Content: "done"},
		openai.ChatCompletionMessage{Role: "user", Content: "thanks"})
	if _, err := Call(context.Background(), e, req, Options{}); err != nil {
		t.Fatal(err)
	}
	if th, _ := rawBody(t, srv.Requests()[0])["thinking"].(map[string]any); th["budget_tokens"] != float64(minThinkingBudget) {
		t.Fatalf("thinking = %v", th)
	}
}

// longConversation has a system prompt and six messages.
func longConversation(system string) Request {
	req := Request{Messages: []openai.ChatCompletionMessage{{Role: "system", Content: system}}}
	for i, text := range []string{"one", "two", "three", "four", "five", "six"} {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: role, Content: text})
	}
	return req
}

func TestAnthropicCacheControl(t *testing.T) {
	t.Parallel()
	tests := []struct {
		caching string
		want    []string
	}{
		{"", []string{"system.0", "messages.3.content.0", "messages.4.content.0", "messages.5.content.0"}},
		{CacheSystemAnd3, []string{"system.0", "messages.3.content.0", "messages.4.content.0", "messages.5.content.0"}},
		{CacheNone, nil},
	}
	for _, tc := range tests {
		t.Run("caching="+tc.caching, func(t *testing.T) {
			t.Parallel()
			srv, e := anthropicServer(t, fakellm.TextStep("seven"))
			e.Caching = tc.caching
			if _, err := Call(context.Background(), e, longConversation("be brief"), Options{}); err != nil {
				t.Fatal(err)
			}
			if got := srv.Requests()[0].CacheBreakpoints(); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("breakpoints = %v, want %v", got, tc.want)
			}
		})
	}
	// In a tool loop the last block of a message is a tool_result.
	srv, e := anthropicServer(t, fakellm.TextStep("ok"))
	if _, err := Call(context.Background(), e, toolTurn(nil), Options{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"system.0", "messages.0.content.0", "messages.1.content.1", "messages.2.content.1"}
	if got := srv.Requests()[0].CacheBreakpoints(); !reflect.DeepEqual(got, want) {
		t.Fatalf("breakpoints = %v, want %v", got, want)
	}
}

func TestAnthropicCacheRead(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			_, e := anthropicServer(t, fakellm.TextStep("a"), fakellm.TextStep("b"))
			req := longConversation(strings.Repeat("All work and no play makes a dull model. ", 200))
			first, err := Call(context.Background(), e, req, Options{Stream: m.stream})
			if err != nil {
				t.Fatal(err)
			}
			u := first.Usage
			if u.CacheWriteTokens == 0 || u.CacheReadTokens != 0 || u.PromptTokens < u.CacheWriteTokens {
				t.Fatalf("first usage = %+v", u)
			}
			second, err := Call(context.Background(), e, req, Options{Stream: m.stream})
			if err != nil {
				t.Fatal(err)
			}
			u = second.Usage
			if u.CacheReadTokens == 0 || u.CacheReadTokens != first.Usage.CacheWriteTokens || u.PromptTokens != first.Usage.PromptTokens {
				t.Fatalf("second usage = %+v (first %+v)", u, first.Usage)
			}
		})
	}
}

func TestAnthropicStopReasons(t *testing.T) {
	t.Parallel()
	tests := []struct{ scripted, want string }{
		{"stop", "stop"},
		{"length", "length"},
		{"content_filter", "content_filter"},
		{"pause_turn", "stop"},
		{"stop_sequence", "stop"},
		{"model_context_window_exceeded", "length"},
	}
	for _, m := range modes {
		for _, tc := range tests {
			t.Run(m.name+"/"+tc.scripted, func(t *testing.T) {
				_, e := anthropicServer(t, fakellm.Step{Text: "partial", FinishReason: tc.scripted})
				r, err := Call(context.Background(), e, request(), Options{Stream: m.stream})
				if err != nil {
					t.Fatal(err)
				}
				if r.FinishReason != tc.want || r.Content != "partial" {
					t.Fatalf("reply = %+v, want finish %s", r, tc.want)
				}
			})
		}
	}
}

func TestAnthropicExtraBodyAndTools(t *testing.T) {
	t.Parallel()
	srv, e := anthropicServer(t, fakellm.TextStep("ok"))
	e.ExtraBody = map[string]any{"metadata": map[string]any{"user_id": "u1"}}
	if _, err := Call(context.Background(), e, toolTurn(nil), Options{}); err != nil {
		t.Fatal(err)
	}
	rec := srv.Requests()[0]
	body := rawBody(t, rec)
	if md, _ := body["metadata"].(map[string]any); md["user_id"] != "u1" {
		t.Fatalf("metadata = %v", body["metadata"])
	}
	tools := rec.Body.Tools
	if len(tools) != 1 || tools[0].Function.Name != "read_file" {
		t.Fatalf("tools = %+v", tools)
	}
	schema, _ := json.Marshal(tools[0].Function.Parameters)
	if !strings.Contains(string(schema), `"required":["path"]`) || !strings.Contains(string(schema), `"type":"object"`) {
		t.Fatalf("schema = %s", schema)
	}
}

func TestAnthropicIdleTimeout(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			_, e := anthropicServer(t, fakellm.Step{Text: "one two three", StallAfterChunks: 2, Hang: !m.stream})
			// The idle timeout, not the minute of patience, ends the call
			// (its message says so); how long it takes is
			// BenchmarkIdleTimeout's to show.
			giveUp, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := Call(giveUp, e, request(), Options{Stream: m.stream, IdleTimeout: 200 * time.Millisecond})
			var ce *Error
			if !errors.As(err, &ce) || ce.Class != turnapi.ClassTimeout || !strings.Contains(ce.Message, "no answer from the model for 200ms") {
				t.Fatalf("err = %v, want the idle timeout", err)
			}
		})
	}
}
