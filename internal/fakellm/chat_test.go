package fakellm_test

import (
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

type wantCall struct {
	id   string // exact id, or "" to expect a generated "call_" id
	name string
	args string
}

type wantAnswer struct {
	text      string
	reasoning string
	calls     []wantCall
	finish    openai.FinishReason
	usage     *openai.Usage // nil: expect an estimate with positive counts
}

var answerCases = []struct {
	name string
	step fakellm.Step
	want wantAnswer
}{
	{
		name: "text",
		step: fakellm.TextStep("Hello there, world. How are you today?"),
		want: wantAnswer{text: "Hello there, world. How are you today?", finish: openai.FinishReasonStop},
	},
	{
		name: "reasoning",
		step: fakellm.Step{Reasoning: "The user asks for the answer to everything.", Text: "42"},
		want: wantAnswer{reasoning: "The user asks for the answer to everything.", text: "42", finish: openai.FinishReasonStop},
	},
	{
		name: "tool calls",
		step: fakellm.ToolStep(
			fakellm.ToolCall{Name: "read_file", Arguments: `{"path":"notes/a.txt","limit":200}`},
			fakellm.ToolCall{ID: "call_custom", Name: "list_dir"},
		),
		want: wantAnswer{
			calls: []wantCall{
				{name: "read_file", args: `{"path":"notes/a.txt","limit":200}`},
				{id: "call_custom", name: "list_dir", args: "{}"},
			},
			finish: openai.FinishReasonToolCalls,
		},
	},
	{
		name: "text with tool call",
		step: fakellm.Step{
			Text:      "Let me look.",
			ToolCalls: []fakellm.ToolCall{{Name: "search", Arguments: `{"query":"größe ✓ unicode"}`}},
		},
		want: wantAnswer{
			text:   "Let me look.",
			calls:  []wantCall{{name: "search", args: `{"query":"größe ✓ unicode"}`}},
			finish: openai.FinishReasonToolCalls,
		},
	},
	{
		name: "explicit finish and usage",
		step: fakellm.Step{Text: "cut", FinishReason: "length", Usage: &openai.Usage{PromptTokens: 7, CompletionTokens: 3}},
		want: wantAnswer{text: "cut", finish: openai.FinishReasonLength, usage: &openai.Usage{PromptTokens: 7, CompletionTokens: 3, TotalTokens: 10}},
	},
	{
		name: "small chunks",
		step: fakellm.Step{Text: "abcdefghij", ChunkSize: 3, ToolCalls: []fakellm.ToolCall{{Name: "f", Arguments: `{"k":"v"}`}}},
		want: wantAnswer{text: "abcdefghij", calls: []wantCall{{name: "f", args: `{"k":"v"}`}}, finish: openai.FinishReasonToolCalls},
	},
}

func checkCalls(t *testing.T, got []openai.ToolCall, want []wantCall) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tool calls, want %d: %+v", len(got), len(want), got)
	}
	seen := map[string]bool{}
	for i, w := range want {
		g := got[i]
		if w.id != "" && g.ID != w.id {
			t.Errorf("call %d: id %q, want %q", i, g.ID, w.id)
		}
		if w.id == "" && !strings.HasPrefix(g.ID, "call_") {
			t.Errorf("call %d: generated id %q lacks the call_ prefix", i, g.ID)
		}
		if seen[g.ID] {
			t.Errorf("call %d: duplicate id %q", i, g.ID)
		}
		seen[g.ID] = true
		if g.Type != openai.ToolTypeFunction {
			t.Errorf("call %d: type %q, want function", i, g.Type)
		}
		if g.Function.Name != w.name || g.Function.Arguments != w.args {
			t.Errorf("call %d: %s(%s), want %s(%s)", i, g.Function.Name, g.Function.Arguments, w.name, w.args)
		}
	}
}

func checkUsage(t *testing.T, got *openai.Usage, want *openai.Usage) {
	t.Helper()
	if got == nil {
		t.Fatal("no usage")
	}
	if want != nil {
		if got.PromptTokens != want.PromptTokens || got.CompletionTokens != want.CompletionTokens || got.TotalTokens != want.TotalTokens {
			t.Errorf("usage %+v, want %+v", *got, *want)
		}
		return
	}
	if got.PromptTokens <= 0 || got.CompletionTokens <= 0 || got.TotalTokens != got.PromptTokens+got.CompletionTokens {
		t.Errorf("implausible estimated usage %+v", *got)
	}
}

func TestChatCompletion(t *testing.T) {
	t.Parallel()
	for _, tc := range answerCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, tc.step)
			c := newClient(t, s, "test-key")
			resp, err := c.CreateChatCompletion(testCtx(t), chatRequest("hi"))
			if err != nil {
				t.Fatalf("CreateChatCompletion: %v", err)
			}
			if resp.Object != "chat.completion" || !strings.HasPrefix(resp.ID, "chatcmpl-") || resp.Model != "fake-model" {
				t.Errorf("envelope: object %q id %q model %q", resp.Object, resp.ID, resp.Model)
			}
			if len(resp.Choices) != 1 {
				t.Fatalf("got %d choices", len(resp.Choices))
			}
			ch := resp.Choices[0]
			if ch.Message.Role != openai.ChatMessageRoleAssistant {
				t.Errorf("role %q", ch.Message.Role)
			}
			if ch.Message.Content != tc.want.text {
				t.Errorf("content %q, want %q", ch.Message.Content, tc.want.text)
			}
			if ch.Message.ReasoningContent != tc.want.reasoning {
				t.Errorf("reasoning %q, want %q", ch.Message.ReasoningContent, tc.want.reasoning)
			}
			if ch.FinishReason != tc.want.finish {
				t.Errorf("finish reason %q, want %q", ch.FinishReason, tc.want.finish)
			}
			checkCalls(t, ch.Message.ToolCalls, tc.want.calls)
			checkUsage(t, &resp.Usage, tc.want.usage)
			if got := resp.Header().Get("X-Request-Id"); got != resp.ID {
				t.Errorf("X-Request-Id %q, want %q", got, resp.ID)
			}
		})
	}
}

func TestChatCompletionStream(t *testing.T) {
	t.Parallel()
	for _, tc := range answerCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, tc.step)
			c := newClient(t, s, "test-key")
			req := chatRequest("hi")
			req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
			stream, err := c.CreateChatCompletionStream(testCtx(t), req)
			if err != nil {
				t.Fatalf("CreateChatCompletionStream: %v", err)
			}
			defer stream.Close()
			if ct := stream.Header().Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("Content-Type %q", ct)
			}
			res, err := collectStream(stream)
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			if res.text != tc.want.text {
				t.Errorf("content %q, want %q", res.text, tc.want.text)
			}
			if res.reasoning != tc.want.reasoning {
				t.Errorf("reasoning %q, want %q", res.reasoning, tc.want.reasoning)
			}
			if res.finish != tc.want.finish {
				t.Errorf("finish reason %q, want %q", res.finish, tc.want.finish)
			}
			checkCalls(t, res.calls, tc.want.calls)
			if len(res.heads) != len(tc.want.calls) {
				t.Errorf("got %d tool call head deltas, want %d", len(res.heads), len(tc.want.calls))
			}
			for _, h := range res.heads {
				if h.Type != openai.ToolTypeFunction || h.Function.Name == "" || h.Function.Arguments != "" {
					t.Errorf("head delta %+v must carry id, type and name only", h)
				}
			}
			for i := range tc.want.calls {
				if res.argPieces[i] < 2 {
					t.Errorf("call %d: arguments arrived in %d pieces, want several", i, res.argPieces[i])
				}
			}
			if res.usageChunks != 1 {
				t.Errorf("got %d usage chunks, want 1", res.usageChunks)
			}
			checkUsage(t, res.usage, tc.want.usage)
			if tc.want.text != "" && strings.Contains(tc.want.text, " ") && res.chunks < 4 {
				t.Errorf("text arrived in only %d chunks", res.chunks)
			}
		})
	}
}

func TestStreamWithoutUsage(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.TextStep("no usage please"))
	c := newClient(t, s, "test-key")
	stream, err := c.CreateChatCompletionStream(testCtx(t), chatRequest("hi"))
	if err != nil {
		t.Fatalf("CreateChatCompletionStream: %v", err)
	}
	defer stream.Close()
	res, err := collectStream(stream)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if res.text != "no usage please" {
		t.Errorf("content %q", res.text)
	}
	if res.usage != nil || res.usageChunks != 0 {
		t.Errorf("usage sent without stream_options.include_usage: %+v", res.usage)
	}
}

// TestRequestsWithoutBodies: with WithoutRequestBodies the Responder sees
// each whole request, and the record keeps its index, status and flags but
// no body, headers or query.
func TestRequestsWithoutBodies(t *testing.T) {
	t.Parallel()
	var seen []string
	s := startServer(t, fakellm.WithoutRequestBodies(), fakellm.WithResponder(func(r fakellm.Request) fakellm.Step {
		m, _ := r.LastMessage()
		seen = append(seen, m.Content+"|"+r.Header.Get("Authorization")+"|"+string(r.Raw[:1]))
		return fakellm.TextStep("echo " + m.Content)
	}))
	c := newClient(t, s, "secret")
	ctx := testCtx(t)
	for _, text := range []string{"first", "second"} {
		res, err := c.CreateChatCompletion(ctx, chatRequest(text))
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if got := res.Choices[0].Message.Content; got != "echo "+text {
			t.Fatalf("%s: answer %q", text, got)
		}
	}
	if err := s.WaitFinished(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if want := []string{"first|Bearer secret|{", "second|Bearer secret|{"}; strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Errorf("the responder saw %q, want %q", seen, want)
	}
	got := s.Requests()
	if len(got) != 2 {
		t.Fatalf("recorded %d requests, want 2", len(got))
	}
	for i, r := range got {
		if r.Index != i || r.Status != 200 || r.Received.IsZero() || r.Finished.IsZero() || r.Cancelled {
			t.Errorf("request %d: record %s", i, flags(r))
		}
		if r.Raw != nil || r.Header != nil || r.Query != nil || len(r.Body.Messages) != 0 || r.Body.Model != "" {
			t.Errorf("request %d kept its body: raw %q header %v query %v body %+v", i, r.Raw, r.Header, r.Query, r.Body)
		}
	}
}

func TestRequestsAreRecorded(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.TextStep("one"), fakellm.TextStep("two"))
	c := newClient(t, s, "secret")
	ctx := testCtx(t)
	if _, err := c.CreateChatCompletion(ctx, chatRequest("first")); err != nil {
		t.Fatalf("first: %v", err)
	}
	req := chatRequest("second")
	req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "read_file",
		Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}}
	stream, err := c.CreateChatCompletionStream(ctx, req)
	if err != nil {
		t.Fatalf("second: %v", err)
	}
	if _, err := collectStream(stream); err != nil {
		t.Fatalf("second stream: %v", err)
	}
	stream.Close()
	if err := s.WaitFinished(ctx, 2); err != nil {
		t.Fatal(err)
	}

	got := s.Requests()
	if len(got) != 2 {
		t.Fatalf("recorded %d requests, want 2", len(got))
	}
	for i, want := range []string{"first", "second"} {
		r := got[i]
		if r.Index != i {
			t.Errorf("request %d: index %d", i, r.Index)
		}
		if m, ok := r.LastMessage(); !ok || m.Content != want {
			t.Errorf("request %d: last message %+v, want %q", i, m, want)
		}
		if r.Header.Get("Authorization") != "Bearer secret" {
			t.Errorf("request %d: authorization %q", i, r.Header.Get("Authorization"))
		}
		if !strings.Contains(string(r.Raw), want) {
			t.Errorf("request %d: raw body %s", i, r.Raw)
		}
		if !r.Scripted || r.Status != 200 || r.Cancelled || r.Exhausted || r.Received.IsZero() || r.Finished.IsZero() {
			t.Errorf("record %s", flags(r))
		}
	}
	if got[0].Body.Stream || !got[1].Body.Stream {
		t.Errorf("stream flags %v %v", got[0].Body.Stream, got[1].Body.Stream)
	}
	if len(got[1].Body.Tools) != 1 || got[1].Body.Tools[0].Function.Name != "read_file" ||
		got[1].Body.Tools[0].Type != openai.ToolTypeFunction || got[1].Body.Tools[0].Function.Description != "Reads a file." {
		t.Errorf("tools not decoded: %+v", got[1].Body.Tools)
	} else if params, _ := json.Marshal(got[1].Body.Tools[0].Function.Parameters); string(params) != `{"type":"object","properties":{"path":{"type":"string"}}}` {
		t.Errorf("tool parameters %s", params)
	}
	if got[0].Body.Tools != nil {
		t.Errorf("a request without tools decoded tools %+v", got[0].Body.Tools)
	}
	if s.Remaining() != 0 {
		t.Errorf("remaining %d steps", s.Remaining())
	}
}
