//lint:file-ignore SA1019 max_tokens is the field OpenAI-compatible servers (and these wire formats) read; go-openai deprecates it only for OpenAI's o1 models

package llm

// Tests of the Ollama provider against the fake's /api/chat: answers as
// one JSON object and as NDJSON streams, the request it sends, and every
// way an answer fails.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// ollamaEndpoint is the Ollama endpoint of a fake server, at the base
// URL it gives (which ends in /v1, as the default Ollama endpoint does).
func ollamaEndpoint(srv *fakellm.Server) Endpoint {
	return Endpoint{Wire: WireOllama, BaseURL: srv.URL(), Model: "llama3.1:8b"}
}

func TestOllamaText(t *testing.T) {
	t.Parallel()
	for _, m := range responsesModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(fakellm.Step{Text: "hello there, world", Reasoning: "thinking it over",
				Usage: &openai.Usage{PromptTokens: 21, CompletionTokens: 8}})
			defer srv.Close()
			r, deltas, err := callResponses(t, ollamaEndpoint(srv), request(), m.stream)
			if err != nil {
				t.Fatal(err)
			}
			if r.Content != "hello there, world" || r.Reasoning != "thinking it over" || r.FinishReason != "stop" || r.ToolCalls != nil {
				t.Fatalf("reply = %+v", r)
			}
			if r.Usage != (Usage{PromptTokens: 21, CompletionTokens: 8}) {
				t.Fatalf("usage = %+v", r.Usage)
			}
			if want := map[bool]string{true: "hello there, world"}[m.stream]; deltas != want {
				t.Fatalf("deltas = %q, want %q", deltas, want)
			}
			req := srv.Requests()[0]
			body := rawBody(t, req)
			if req.Wire != fakellm.WireOllama || body["stream"] != m.stream || body["model"] != "llama3.1:8b" {
				t.Fatalf("request: wire %s, body %s", req.Wire, req.Raw)
			}
			if _, ok := body["options"]; ok {
				t.Fatalf("options sent without a cap or an extra body: %s", req.Raw)
			}
		})
	}
}

// TestOllamaParallelToolCalls: calls that come without ids get distinct
// ones; the results sent back name the tool
// of the call they answer and follow the calls' order.
func TestOllamaParallelToolCalls(t *testing.T) {
	t.Parallel()
	for _, m := range responsesModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			calls := fakellm.ToolStep(
				fakellm.ToolCall{Name: "read_file", Arguments: `{"path": "x.txt", "limit": 10}`},
				fakellm.ToolCall{Name: "terminal", Arguments: `{"command":"echo hi"}`},
				fakellm.ToolCall{Name: "read_file", Arguments: `{"path": "x.txt", "limit": 10}`},
			)
			srv := fakellm.New(calls, fakellm.TextStep("done"))
			defer srv.Close()
			e := ollamaEndpoint(srv)
			r, _, err := callResponses(t, e, request(), m.stream)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.ToolCalls) != 3 || r.FinishReason != "tool_calls" {
				t.Fatalf("reply = %+v", r)
			}
			ids := map[string]bool{}
			for i, c := range r.ToolCalls {
				if c.ID == "" || ids[c.ID] || c.Type != openai.ToolTypeFunction {
					t.Fatalf("call %d: id %q (ids so far %v)", i, c.ID, ids)
				}
				ids[c.ID] = true
			}
			if r.ToolCalls[0].Function.Arguments != `{"path":"x.txt","limit":10}` || r.ToolCalls[1].Function.Name != "terminal" {
				t.Fatalf("calls = %+v", r.ToolCalls)
			}

			req := Request{Messages: []openai.ChatCompletionMessage{
				{Role: "user", Content: "hi"},
				{Role: "assistant", ToolCalls: r.ToolCalls},
				{Role: "tool", ToolCallID: r.ToolCalls[2].ID, Content: "third"},
				{Role: "tool", ToolCallID: r.ToolCalls[0].ID, Content: "first"},
				{Role: "tool", ToolCallID: "call_unknown", Content: "stray"},
			}}
			if _, _, err := callResponses(t, e, req, m.stream); err != nil {
				t.Fatal(err)
			}
			sent := srv.Requests()[1]
			msgs := sent.Body.Messages
			if len(msgs) != 5 || msgs[1].Role != "assistant" || len(msgs[1].ToolCalls) != 3 {
				t.Fatalf("messages = %+v", msgs)
			}
			for i, want := range []struct{ id, content string }{
				{r.ToolCalls[0].ID, "first"}, {r.ToolCalls[1].ID, missingOutput}, {r.ToolCalls[2].ID, "third"},
			} {
				got := msgs[2+i]
				if got.Role != "tool" || got.ToolCallID != want.id || got.Content != want.content {
					t.Fatalf("result %d = %+v, want %+v", i, got, want)
				}
			}
			var native struct {
				Messages []struct {
					Role      string `json:"role"`
					ToolName  string `json:"tool_name"`
					ToolCalls []struct {
						Function struct {
							Arguments json.RawMessage `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(sent.Raw, &native); err != nil {
				t.Fatal(err)
			}
			if names := []string{native.Messages[2].ToolName, native.Messages[3].ToolName, native.Messages[4].ToolName}; strings.Join(names, ",") != "read_file,terminal,read_file" {
				t.Fatalf("tool_name = %v", names)
			}
			if args := string(native.Messages[1].ToolCalls[1].Function.Arguments); args != `{"command":"echo hi"}` {
				t.Fatalf("arguments sent as %s, want the object", args)
			}
		})
	}
}

// TestOllamaRequestBody: the options of the extra body (num_ctx) and the
// reply's cap (num_predict) go together into options; the extra body's
// other fields go as they are; tools go in Ollama's shape; arguments that
// are not an object go as {}; the thinking of a reply that called tools
// goes back with it.
func TestOllamaRequestBody(t *testing.T) {
	t.Parallel()
	srv := fakellm.New(fakellm.Step{Reasoning: "look at the file first", ToolCalls: []fakellm.ToolCall{{Name: "read_file", Arguments: `{"path":"a"}`}}},
		fakellm.TextStep("ok"))
	defer srv.Close()
	e := ollamaEndpoint(srv)
	e.ExtraBody = map[string]any{"options": map[string]any{"num_ctx": 32768, "num_predict": 5}, "keep_alive": "10m"}
	req := Request{MaxTokens: 1000, Messages: []openai.ChatCompletionMessage{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}},
		Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "read_file", Description: "reads a file",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}}}}
	r, _, err := callResponses(t, e, req, true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Replay == nil || r.Replay.Wire != WireOllama || r.Reasoning != "look at the file first" {
		t.Fatalf("reply = %+v", r)
	}
	first := srv.Requests()[0]
	raw := string(first.Raw)
	for _, want := range []string{`"options":{"num_ctx":32768,"num_predict":1000}`, `"keep_alive":"10m"`,
		`"tools":[{"type":"function","function":{"name":"read_file","description":"reads a file","parameters":{"properties":{"path":{"type":"string"}},"type":"object"}}}]`,
		`{"role":"system","content":"be brief"}`} {
		if !strings.Contains(raw, want) {
			t.Errorf("request lacks %s: %s", want, raw)
		}
	}
	if first.Body.MaxTokens != 1000 || len(first.Body.Tools) != 1 {
		t.Fatalf("the fake read max_tokens %d, %d tools", first.Body.MaxTokens, len(first.Body.Tools))
	}

	bad := openai.ToolCall{ID: "call_x", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "terminal", Arguments: "not json"}}
	next := Request{Replay: map[string]Replay{r.ToolCalls[0].ID: *r.Replay}, Messages: []openai.ChatCompletionMessage{
		{Role: "user", Content: "hi"},
		{Role: "assistant", ToolCalls: r.ToolCalls},
		{Role: "tool", ToolCallID: r.ToolCalls[0].ID, Content: "file a"},
		{Role: "assistant", ToolCalls: []openai.ToolCall{bad}},
		{Role: "tool", ToolCallID: "call_x", Content: "ran"},
	}}
	if _, _, err := callResponses(t, ollamaEndpoint(srv), next, false); err != nil {
		t.Fatal(err)
	}
	raw = string(srv.Requests()[1].Raw)
	for _, want := range []string{`"thinking":"look at the file first"`, `"arguments":{}`, `"tool_name":"terminal"`, `"stream":false`} {
		if !strings.Contains(raw, want) {
			t.Errorf("request lacks %s: %s", want, raw)
		}
	}
}

// TestOllamaBaseURL: Ollama's root and the /v1 of its OpenAI-compatible
// API both reach /api/chat; the key goes as a bearer token.
func TestOllamaBaseURL(t *testing.T) {
	t.Parallel()
	srv := fakellm.New(fakellm.WithAPIKey("sk-proxy"), fakellm.TextStep("a"), fakellm.TextStep("b"))
	defer srv.Close()
	for _, base := range []string{srv.URL(), strings.TrimSuffix(srv.URL(), "/v1") + "/"} {
		e := Endpoint{Wire: WireOllama, BaseURL: base, APIKey: "sk-proxy", Model: "m"}
		if _, _, err := callResponses(t, e, request(), true); err != nil {
			t.Fatalf("base %s: %v", base, err)
		}
	}
	for _, r := range srv.Requests() {
		if r.Wire != fakellm.WireOllama || r.Header.Get("Authorization") != "Bearer sk-proxy" {
			t.Fatalf("request %d: wire %s, authorization %q", r.Index, r.Wire, r.Header.Get("Authorization"))
		}
	}
}

func TestOllamaFinishLength(t *testing.T) {
	t.Parallel()
	for _, m := range responsesModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(fakellm.Step{Text: "a long answer that", FinishReason: "length"})
			defer srv.Close()
			r, _, err := callResponses(t, ollamaEndpoint(srv), request(), m.stream)
			if err != nil {
				t.Fatal(err)
			}
			if r.FinishReason != "length" || r.Content != "a long answer that" || r.Usage.CompletionTokens == 0 {
				t.Fatalf("reply = %+v", r)
			}
		})
	}
}

func TestOllamaErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		step       fakellm.Step
		class      turnapi.ErrorClass
		in         string
		retryAfter time.Duration
	}{
		{"model not found", fakellm.ErrorStep(404, `model "nope" not found, try pulling it first`), turnapi.ClassModelNotFound, "try pulling it first", 0},
		{"rate limited", fakellm.Step{Status: 429, ErrorMessage: "too many requests", RetryAfter: "3"}, turnapi.ClassRateLimit, "too many requests", 3 * time.Second},
		{"server", fakellm.ErrorStep(500, "llama runner process has terminated"), turnapi.ClassServer, "llama runner", 0},
		{"overloaded", fakellm.ErrorStep(503, "server busy, please try again. maximum pending requests exceeded"), turnapi.ClassOverloaded, "server busy", 0},
		{"bad request", fakellm.ErrorStep(400, "invalid message format"), turnapi.ClassBadRequest, "invalid message format", 0},
		{"unauthorized", fakellm.ErrorStep(401, "unauthorized"), turnapi.ClassAuth, "unauthorized", 0},
		{"error page", fakellm.Step{Status: 502, Body: "<html>bad gateway</html>"}, turnapi.ClassServer, "<html>bad gateway</html>", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(tt.step)
			defer srv.Close()
			_, _, err := callResponses(t, ollamaEndpoint(srv), request(), true)
			e := asResponsesError(t, err)
			if e.Class != tt.class || e.Status != tt.step.Status || !strings.Contains(e.Message, tt.in) || e.RetryAfter != tt.retryAfter {
				t.Fatalf("error = %+v (%v), want %s %d %q retry after %v", e, e, tt.class, tt.step.Status, tt.in, tt.retryAfter)
			}
		})
	}
}

// TestOllamaBrokenAnswers: cut-off streams keep their text; bodies that
// are not Ollama's answer are invalid responses; an error line in a
// stream is the model's failure.
func TestOllamaBrokenAnswers(t *testing.T) {
	t.Parallel()
	ndjson := func(body string) fakellm.Step { return fakellm.Step{Body: body, ContentType: "application/x-ndjson"} }
	line := `{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"partial "},"done":false}` + "\n"
	tests := []struct {
		name     string
		stream   bool
		step     fakellm.Step
		class    turnapi.ErrorClass
		in       string
		streamed string
	}{
		{"stream ends early", true, fakellm.Step{Text: "partial answer that goes on", EndAfterChunks: 2}, turnapi.ClassTruncatedReply, "without its done line", "partial answer"},
		{"stream breaks", true, fakellm.Step{Text: "partial answer that goes on", BreakAfterChunks: 2}, turnapi.ClassTruncatedReply, "broke", "partial answer"},
		{"line cut off at the end", true, ndjson(line + `{"model":"m","message":{"content":"more`), turnapi.ClassTruncatedReply, "cut off", "partial "},
		{"html page", true, fakellm.HTMLStep("Service Unavailable"), turnapi.ClassInvalidResponse, "it begins: <!DOCTYPE html>", ""},
		{"html page json", false, fakellm.HTMLStep("Service Unavailable"), turnapi.ClassInvalidResponse, "text/html", ""},
		{"sse body", true, fakellm.Step{Body: "data: {\"choices\":[]}\n\n", ContentType: "text/event-stream"}, turnapi.ClassInvalidResponse, "it begins: data:", ""},
		{"openai answer", false, fakellm.Step{Body: `{"id":"x","choices":[]}`, ContentType: "application/json"}, turnapi.ClassInvalidResponse, "no done field", ""},
		{"json of the wrong type", false, fakellm.Step{Body: `["a"]`, ContentType: "application/json"}, turnapi.ClassInvalidResponse, `it begins: ["a"]`, ""},
		{"json cut in half", false, fakellm.Step{Text: "hello there", EndAfterChunks: 1}, turnapi.ClassInvalidResponse, "it begins: {", ""},
		{"empty body", true, ndjson("\n"), turnapi.ClassInvalidResponse, "the body was empty", ""},
		{"error line", true, ndjson(line + `{"error":"an error was encountered while running the model"}` + "\n"), turnapi.ClassServer, "while running the model", "partial "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(tt.step)
			defer srv.Close()
			r, _, err := callResponses(t, ollamaEndpoint(srv), request(), tt.stream)
			e := asResponsesError(t, err)
			if e.Class != tt.class || !strings.Contains(e.Error(), tt.in) || e.Streamed != tt.streamed || r.Streamed != tt.streamed {
				t.Fatalf("error = %v (streamed %q), want %s with %q, streamed %q", e, e.Streamed, tt.class, tt.in, tt.streamed)
			}
		})
	}
}

func TestOllamaIdleTimeout(t *testing.T) {
	t.Parallel()
	srv := fakellm.New(fakellm.Step{Text: "one two three", StallAfterChunks: 1})
	defer srv.Close()
	giveUp, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Call(giveUp, ollamaEndpoint(srv), request(), Options{Stream: true, IdleTimeout: 200 * time.Millisecond})
	if e := asResponsesError(t, err); e.Class != turnapi.ClassTimeout || e.Streamed != "one" ||
		!strings.Contains(e.Message, "no answer from the model for 200ms") {
		t.Fatalf("error = %v, streamed %q; want the idle timeout", e, e.Streamed)
	}
}

// TestOllamaGivenIDs: ids the server gives are kept (a repeated one is
// replaced), and an answer's calls come in any number of lines.
func TestOllamaGivenIDs(t *testing.T) {
	t.Parallel()
	body := `{"model":"m","created_at":"t1","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_a","function":{"index":0,"name":"todo","arguments":{}}}]},"done":false}
{"model":"m","created_at":"t1","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_a","function":{"index":1,"name":"todo","arguments":{"x":1}}}]},"done":false}
{"model":"m","created_at":"t1","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":2}
`
	srv := fakellm.New(fakellm.Step{Body: body, ContentType: "application/x-ndjson"})
	defer srv.Close()
	r, _, err := callResponses(t, ollamaEndpoint(srv), request(), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ToolCalls) != 2 || r.ToolCalls[0].ID != "call_a" || r.ToolCalls[1].ID == "call_a" || r.ToolCalls[1].ID == "" ||
		r.ToolCalls[1].Function.Arguments != `{"x":1}` || r.FinishReason != "tool_calls" || r.Usage.PromptTokens+r.Usage.CompletionTokens != 5 {
		t.Fatalf("reply = %+v", r)
	}
}
