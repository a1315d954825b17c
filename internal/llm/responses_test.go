//lint:file-ignore SA1019 max_tokens is the field OpenAI-compatible servers (and these wire formats) read; go-openai deprecates it only for OpenAI's o1 models

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

// responsesModes are the two ways a call is made: a JSON answer and a stream.
var responsesModes = []struct {
	name   string
	stream bool
}{{"json", false}, {"stream", true}}

// responsesEndpoint is the Responses endpoint of a fake server.
func responsesEndpoint(srv *fakellm.Server) Endpoint {
	return Endpoint{Wire: WireResponses, BaseURL: srv.URL(), APIKey: "k", Model: "fake-model"}
}

// callResponses calls srv once in the given mode, collecting the deltas.
func callResponses(t *testing.T, e Endpoint, req Request, stream bool) (Reply, string, error) {
	t.Helper()
	var deltas strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := Call(ctx, e, req, Options{Stream: stream, OnDelta: func(s string) { deltas.WriteString(s) }})
	return r, deltas.String(), err
}

// asResponsesError returns err as an *Error, failing the test when it is not one.
func asResponsesError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	return e
}

func TestResponsesText(t *testing.T) {
	t.Parallel()
	for _, m := range responsesModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(fakellm.Step{Text: "hello there, world", Reasoning: "thinking it over"})
			defer srv.Close()
			req := Request{MaxTokens: 300, Messages: []openai.ChatCompletionMessage{
				{Role: "system", Content: "be brief"},
				{Role: "user", Content: "hi"},
			}}
			r, deltas, err := callResponses(t, responsesEndpoint(srv), req, m.stream)
			if err != nil {
				t.Fatal(err)
			}
			if r.Content != "hello there, world" || r.Reasoning != "thinking it over" || r.FinishReason != "stop" {
				t.Fatalf("reply = %+v", r)
			}
			if r.Usage.PromptTokens == 0 || r.Usage.CompletionTokens == 0 {
				t.Fatalf("usage = %+v", r.Usage)
			}
			if m.stream && deltas != "hello there, world" {
				t.Fatalf("deltas = %q", deltas)
			}
			got := srv.Requests()[0]
			if got.Wire != fakellm.WireResponses || got.Body.Model != "fake-model" || got.Body.Stream != m.stream ||
				got.Body.MaxTokens != 300 {
				t.Fatalf("request: wire %s model %q stream %v max %d", got.Wire, got.Body.Model, got.Body.Stream, got.Body.MaxTokens)
			}
			if len(got.Body.Messages) != 2 || got.Body.Messages[0].Role != "system" || got.Body.Messages[0].Content != "be brief" ||
				got.Body.Messages[1].Content != "hi" {
				t.Fatalf("messages = %+v", got.Body.Messages)
			}
		})
	}
}

// TestResponsesRequestBody: the request is stateless and asks for the
// encrypted reasoning, the effort and a summary; tools are not strict.
func TestResponsesRequestBody(t *testing.T) {
	t.Parallel()
	srv := fakellm.New(fakellm.TextStep("ok"))
	defer srv.Close()
	e := responsesEndpoint(srv)
	e.ReasoningEffort = "High"
	e.ExtraBody = map[string]any{"service_tier": "flex"}
	req := request()
	req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "read_file", Description: "reads a file",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
	}}}
	if _, _, err := callResponses(t, e, req, false); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Store     *bool    `json:"store"`
		Include   []string `json:"include"`
		Reasoning struct {
			Effort, Summary string
		} `json:"reasoning"`
		ServiceTier string `json:"service_tier"`
		Tools       []struct {
			Type, Name, Description string
			Strict                  *bool
			Parameters              map[string]any
		} `json:"tools"`
	}
	got := srv.Requests()[0]
	if err := json.Unmarshal(got.Raw, &body); err != nil {
		t.Fatal(err)
	}
	if body.Store == nil || *body.Store || len(body.Include) != 1 || body.Include[0] != "reasoning.encrypted_content" {
		t.Errorf("store %v include %v", body.Store, body.Include)
	}
	if body.Reasoning.Effort != "high" || body.Reasoning.Summary != "auto" || body.ServiceTier != "flex" {
		t.Errorf("reasoning %+v service tier %q", body.Reasoning, body.ServiceTier)
	}
	if len(body.Tools) != 1 || body.Tools[0].Type != "function" || body.Tools[0].Name != "read_file" ||
		body.Tools[0].Strict == nil || *body.Tools[0].Strict || body.Tools[0].Parameters["type"] != "object" {
		t.Errorf("tools %+v", body.Tools)
	}
	if len(got.Body.Tools) != 1 || got.Body.Tools[0].Function.Name != "read_file" || got.Body.ReasoningEffort != "high" {
		t.Errorf("recorded tools %+v effort %q", got.Body.Tools, got.Body.ReasoningEffort)
	}
	if auth := got.Header.Get("Authorization"); auth != "Bearer k" {
		t.Errorf("Authorization %q", auth)
	}
}

func TestResponsesParallelToolCalls(t *testing.T) {
	t.Parallel()
	for _, m := range responsesModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(fakellm.Step{ChunkSize: 4, ToolCalls: []fakellm.ToolCall{
				{ID: "call_a", Name: "read_file", Arguments: `{"path":"x.txt","limit":10}`},
				{ID: "call_b", Name: "terminal", Arguments: `{"command":"echo hi"}`},
			}})
			defer srv.Close()
			r, _, err := callResponses(t, responsesEndpoint(srv), request(), m.stream)
			if err != nil {
				t.Fatal(err)
			}
			if r.FinishReason != "tool_calls" || len(r.ToolCalls) != 2 || r.Replay != nil {
				t.Fatalf("reply = %+v", r)
			}
			a, b := r.ToolCalls[0], r.ToolCalls[1]
			if a.ID != "call_a" || a.Type != openai.ToolTypeFunction || a.Function.Name != "read_file" ||
				a.Function.Arguments != `{"path":"x.txt","limit":10}` ||
				b.ID != "call_b" || b.Function.Name != "terminal" || b.Function.Arguments != `{"command":"echo hi"}` {
				t.Fatalf("tool calls = %+v", r.ToolCalls)
			}
		})
	}
}

// responsesToolTurn is the conversation after a reply with tool calls: the
// request, the assistant message with the calls and their results.
func responsesToolTurn(r Reply) Request {
	msgs := []openai.ChatCompletionMessage{{Role: "user", Content: "look around"},
		{Role: "assistant", Content: r.Content, ToolCalls: r.ToolCalls}}
	for _, c := range r.ToolCalls {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: "tool", ToolCallID: c.ID, Content: "result of " + c.ID})
	}
	return Request{Messages: msgs}
}

// TestResponsesReplay: the reasoning items of a tool-call reply travel in
// Reply.Replay and, sent back, satisfy the fake as they do the real API;
// without them the fake refuses the request.
func TestResponsesReplay(t *testing.T) {
	t.Parallel()
	for _, m := range responsesModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(
				fakellm.Step{Reasoning: "I should list the files.", Text: "Let me look.",
					ToolCalls: []fakellm.ToolCall{{Name: "list_dir"}, {Name: "read_file", Arguments: `{"path":"a"}`}}},
				fakellm.TextStep("done"),
			)
			defer srv.Close()
			e := responsesEndpoint(srv)
			first, _, err := callResponses(t, e, request(), m.stream)
			if err != nil {
				t.Fatal(err)
			}
			if first.Replay == nil || first.Replay.Wire != WireResponses || len(first.ToolCalls) != 2 ||
				first.Reasoning != "I should list the files." {
				t.Fatalf("first reply = %+v", first)
			}
			var items []responsesReasoning
			if err := json.Unmarshal(first.Replay.Data, &items); err != nil || len(items) != 1 ||
				!strings.HasPrefix(items[0].ID, "rs_") || items[0].EncryptedContent == "" {
				t.Fatalf("replay data %s: %v", first.Replay.Data, err)
			}

			next := responsesToolTurn(first)
			_, _, err = callResponses(t, e, next, m.stream)
			if e := asResponsesError(t, err); e.Class != turnapi.ClassBadRequest || e.Status != 400 ||
				!strings.Contains(e.Message, "without its required 'reasoning' item") {
				t.Fatalf("without replay: %v", err)
			}

			next.Replay = map[string]Replay{ReplayKey(next.Messages[1]): *first.Replay}
			r, _, err := callResponses(t, e, next, m.stream)
			if err != nil {
				t.Fatalf("with replay: %v", err)
			}
			if r.Content != "done" {
				t.Fatalf("reply = %+v", r)
			}
			msgs := srv.Requests()[2].Body.Messages
			if len(msgs) != 4 || msgs[1].ReasoningContent != "I should list the files." || msgs[1].Content != "Let me look." ||
				len(msgs[1].ToolCalls) != 2 || msgs[3].Content != "result of "+first.ToolCalls[1].ID {
				t.Fatalf("recorded messages = %+v", msgs)
			}
		})
	}
}

// TestResponsesForeignHistory: a conversation whose earlier calls were
// written by another wire format (no replay, an output without its call,
// a call without an output) is made valid and accepted.
func TestResponsesForeignHistory(t *testing.T) {
	t.Parallel()
	srv := fakellm.New(fakellm.TextStep("fine"))
	defer srv.Close()
	call := func(id, name string) openai.ToolCall {
		return openai.ToolCall{ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: `{}`}}
	}
	req := Request{
		Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "be brief"},
			{Role: "user", Content: "go"},
			{Role: "tool", ToolCallID: "toolu_orphan", Content: "an output without its call"},
			{Role: "assistant", ReasoningContent: "thinking elsewhere", ToolCalls: []openai.ToolCall{call("toolu_1", "a"), call("toolu_2", "b")}},
			{Role: "tool", ToolCallID: "toolu_1", Content: "one"},
			{Role: "user", Content: "and now?"},
			{Role: "system", Content: "a late note"},
		},
		Replay: map[string]Replay{"toolu_1": {Wire: WireAnthropic, Data: json.RawMessage(`[{"type":"thinking"}]`)}},
	}
	r, _, err := callResponses(t, responsesEndpoint(srv), req, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != "fine" {
		t.Fatalf("reply = %+v", r)
	}
	msgs := srv.Requests()[0].Body.Messages
	want := []struct{ role, id, content string }{
		{"system", "", "be brief"},
		{"user", "", "go"},
		{"assistant", "", ""},
		{"tool", "toolu_1", "one"},
		{"tool", "toolu_2", missingOutput},
		{"user", "", "and now?"},
		{"system", "", "a late note"},
	}
	if len(msgs) != len(want) {
		t.Fatalf("recorded %d messages, want %d: %+v", len(msgs), len(want), msgs)
	}
	for i, w := range want {
		if msgs[i].Role != w.role || msgs[i].ToolCallID != w.id || msgs[i].Content != w.content {
			t.Errorf("message %d = %+v, want %+v", i, msgs[i], w)
		}
	}
	if len(msgs[2].ToolCalls) != 2 || msgs[2].ReasoningContent != "" {
		t.Errorf("assistant message = %+v", msgs[2])
	}
}

func TestResponsesFinishAndUsage(t *testing.T) {
	t.Parallel()
	usage := &openai.Usage{PromptTokens: 1200, CompletionTokens: 80,
		PromptTokensDetails:     &openai.PromptTokensDetails{CachedTokens: 1000},
		CompletionTokensDetails: &openai.CompletionTokensDetails{ReasoningTokens: 30}}
	tests := []struct {
		name   string
		step   fakellm.Step
		finish string
		usage  *Usage
	}{
		{"length", fakellm.Step{Text: "cut sh", FinishReason: "length"}, "length", nil},
		{"content filter", fakellm.Step{Text: "", FinishReason: "content_filter"}, "content_filter", nil},
		{"cached usage", fakellm.Step{Text: "ok", Usage: usage}, "stop",
			&Usage{PromptTokens: 1200, CompletionTokens: 80, CacheReadTokens: 1000, ReasoningTokens: 30}},
	}
	for _, tt := range tests {
		for _, m := range responsesModes {
			t.Run(tt.name+"/"+m.name, func(t *testing.T) {
				srv := fakellm.New(tt.step)
				defer srv.Close()
				r, _, err := callResponses(t, responsesEndpoint(srv), request(), m.stream)
				if err != nil {
					t.Fatal(err)
				}
				if r.FinishReason != tt.finish || r.Content != tt.step.Text {
					t.Fatalf("reply = %+v, want finish %s", r, tt.finish)
				}
				if tt.usage != nil && r.Usage != *tt.usage {
					t.Fatalf("usage = %+v, want %+v", r.Usage, *tt.usage)
				}
			})
		}
	}
}

func TestResponsesErrors(t *testing.T) {
	t.Parallel()
	failed := "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\",\"output\":[]}}\n\n" +
		"event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":1,\"response\":{\"id\":\"resp_1\",\"status\":\"failed\"," +
		"\"error\":{\"code\":\"rate_limit_exceeded\",\"message\":\"slow down\"},\"output\":[]}}\n\n"
	errorEvent := "event: error\ndata: {\"type\":\"error\",\"sequence_number\":0,\"code\":\"context_length_exceeded\",\"message\":\"too long\",\"param\":null}\n\n"
	tests := []struct {
		name   string
		stream bool
		step   fakellm.Step
		class  turnapi.ErrorClass
		status int
		retry  time.Duration
		in     string
	}{
		{"rate limit", false, fakellm.Step{Status: 429, ErrorMessage: "slow down", RetryAfter: "5"}, turnapi.ClassRateLimit, 429, 5 * time.Second, "slow down"},
		{"rate limit streamed", true, fakellm.Step{Status: 429, RetryAfter: "5"}, turnapi.ClassRateLimit, 429, 5 * time.Second, ""},
		{"auth", false, fakellm.Step{Status: 401, ErrorMessage: "bad key"}, turnapi.ClassAuth, 401, 0, "bad key"},
		{"server", true, fakellm.Step{Status: 500}, turnapi.ClassServer, 500, 0, ""},
		{"overloaded", false, fakellm.Step{Status: 503}, turnapi.ClassOverloaded, 503, 0, ""},
		{"context overflow", false, fakellm.Step{Status: 400, ErrorMessage: "Your input exceeds the context window",
			ErrorCode: "context_length_exceeded"}, turnapi.ClassContextOverflow, 400, 0, "context window"},
		{"error page with error status", false, fakellm.Step{Status: 502, Body: "<html><body>Bad gateway</body></html>"},
			turnapi.ClassServer, 502, 0, "Bad gateway"},
		{"truncated stream", true, fakellm.Step{Text: "partial answer that goes on", EndAfterChunks: 2},
			turnapi.ClassTruncatedReply, 0, 0, "cut off"},
		{"broken stream", true, fakellm.Step{Text: "partial answer that goes on", BreakAfterChunks: 2},
			turnapi.ClassTruncatedReply, 0, 0, "broke"},
		{"broken json", false, fakellm.Step{Text: "hello there", BreakAfterChunks: 1}, turnapi.ClassNetwork, 0, 0, ""},
		{"json cut in half", false, fakellm.Step{Text: "hello there", EndAfterChunks: 1}, turnapi.ClassInvalidResponse, 200, 0, "it begins: {"},
		{"html page", false, fakellm.HTMLStep("Service Unavailable"), turnapi.ClassInvalidResponse, 200, 0, "text/html"},
		{"html page streamed", true, fakellm.HTMLStep("Service Unavailable"), turnapi.ClassInvalidResponse, 200, 0, "<!DOCTYPE html>"},
		{"json of the wrong type", false, fakellm.Step{Body: `["a"]`, ContentType: "application/json"}, turnapi.ClassInvalidResponse, 200, 0, `["a"]`},
		{"json of no response", false, fakellm.Step{Body: `{}`, ContentType: "application/json"}, turnapi.ClassInvalidResponse, 200, 0, "not a response"},
		{"sse of garbage", true, fakellm.Step{Body: "data: <html>nope</html>\n\n", ContentType: "text/event-stream"},
			turnapi.ClassInvalidResponse, 200, 0, "<html>nope"},
		{"chat chunks", true, fakellm.Step{Body: "data: {\"choices\":[]}\n\ndata: [DONE]\n\n", ContentType: "text/event-stream"},
			turnapi.ClassInvalidResponse, 200, 0, "without a Responses API event"},
		{"response.failed", true, fakellm.Step{Body: failed, ContentType: "text/event-stream"}, turnapi.ClassRateLimit, 0, 0, "slow down"},
		{"error event", true, fakellm.Step{Body: errorEvent, ContentType: "text/event-stream"}, turnapi.ClassContextOverflow, 0, 0, "too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(tt.step)
			defer srv.Close()
			_, _, err := callResponses(t, responsesEndpoint(srv), request(), tt.stream)
			e := asResponsesError(t, err)
			if e.Class != tt.class || e.Status != tt.status || e.RetryAfter != tt.retry {
				t.Fatalf("class %s status %d retry %v, want %s %d %v: %v", e.Class, e.Status, e.RetryAfter,
					tt.class, tt.status, tt.retry, e)
			}
			if !strings.Contains(e.Error(), tt.in) {
				t.Errorf("message %q lacks %q", e.Error(), tt.in)
			}
			if e.Class == turnapi.ClassTruncatedReply && e.Streamed != "partial answer" {
				t.Errorf("streamed %q, want the text received so far", e.Streamed)
			}
		})
	}
}

func TestResponsesWrongKey(t *testing.T) {
	t.Parallel()
	srv := fakellm.New(fakellm.WithAPIKey("right"), fakellm.TextStep("never"))
	defer srv.Close()
	_, _, err := callResponses(t, responsesEndpoint(srv), request(), false)
	if e := asResponsesError(t, err); e.Class != turnapi.ClassAuth || e.Status != 401 {
		t.Fatalf("err = %v", err)
	}
}

func TestResponsesIdleTimeout(t *testing.T) {
	t.Parallel()
	srv := fakellm.New(fakellm.Step{Text: "one two three", StallAfterChunks: 1})
	defer srv.Close()
	var chunks int
	_, err := Call(context.Background(), responsesEndpoint(srv), request(),
		Options{Stream: true, IdleTimeout: 300 * time.Millisecond, OnChunk: func() { chunks++ }})
	if e := asResponsesError(t, err); e.Class != turnapi.ClassTimeout || chunks == 0 {
		t.Fatalf("err = %v after %d chunks", err, chunks)
	}
}

// TestResponsesStreamWithoutFinalOutput: a server whose final event does
// not repeat the output still gives the reply its events built.
func TestResponsesStreamWithoutFinalOutput(t *testing.T) {
	t.Parallel()
	ev := func(typ, rest string) string {
		return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"," + rest + "}\n\n"
	}
	body := ev("response.created", `"response":{"id":"r","status":"in_progress","output":[]}`) +
		ev("response.output_item.added", `"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}`) +
		ev("response.reasoning_summary_text.delta", `"output_index":0,"item_id":"rs_1","summary_index":0,"delta":"first"`) +
		ev("response.reasoning_summary_text.delta", `"output_index":0,"item_id":"rs_1","summary_index":1,"delta":"second"`) +
		ev("response.output_item.done", `"output_index":0,"item":{"id":"rs_1","type":"reasoning","encrypted_content":"e1","summary":[{"type":"summary_text","text":"first"}]}`) +
		ev("response.output_text.delta", `"output_index":1,"item_id":"m","content_index":0,"delta":"hel"`) +
		ev("response.output_text.delta", `"output_index":1,"item_id":"m","content_index":0,"delta":"lo"`) +
		ev("response.output_item.added", `"output_index":2,"item":{"id":"fc","type":"function_call","call_id":"c9","name":"f","arguments":""}`) +
		ev("response.function_call_arguments.delta", `"output_index":2,"item_id":"fc","delta":"{\"a\""`) +
		ev("response.function_call_arguments.delta", `"output_index":2,"item_id":"fc","delta":":1}"`) +
		ev("response.completed", `"response":{"id":"r","status":"completed","output":[],"usage":{"input_tokens":9,"output_tokens":4,"input_tokens_details":{"cached_tokens":3},"output_tokens_details":{"reasoning_tokens":0},"total_tokens":13}}`)
	srv := fakellm.New(fakellm.Step{Body: body, ContentType: "text/event-stream"})
	defer srv.Close()
	r, deltas, err := callResponses(t, responsesEndpoint(srv), request(), true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != "hello" || deltas != "hello" || r.Reasoning != "first\n\nsecond" || r.FinishReason != "tool_calls" ||
		len(r.ToolCalls) != 1 || r.ToolCalls[0].ID != "c9" || r.ToolCalls[0].Function.Arguments != `{"a":1}` ||
		r.Usage != (Usage{PromptTokens: 9, CompletionTokens: 4, CacheReadTokens: 3}) {
		t.Fatalf("reply = %+v", r)
	}
	if r.Replay == nil || string(r.Replay.Data) != `[{"id":"rs_1","encrypted_content":"e1","summary":["first"]}]` {
		t.Fatalf("replay = %+v", r.Replay)
	}
}

// TestResponsesUserImages: the parts of a multi-part user message travel
// as input text and images.
func TestResponsesUserImages(t *testing.T) {
	t.Parallel()
	srv := fakellm.New(fakellm.TextStep("a cat"))
	defer srv.Close()
	req := Request{Messages: []openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{
		{Type: openai.ChatMessagePartTypeText, Text: "what is this?"},
		{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,AAAA"}},
	}}}}
	if _, _, err := callResponses(t, responsesEndpoint(srv), req, false); err != nil {
		t.Fatal(err)
	}
	parts := srv.Requests()[0].Body.Messages[0].MultiContent
	if len(parts) != 2 || parts[0].Text != "what is this?" || parts[1].ImageURL == nil ||
		parts[1].ImageURL.URL != "data:image/png;base64,AAAA" || parts[1].ImageURL.Detail != "auto" {
		t.Fatalf("parts = %+v", parts)
	}
}
