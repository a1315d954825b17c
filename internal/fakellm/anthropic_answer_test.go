package fakellm_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// antMessage is the part of a JSON answer the tests look at.
type antMessage struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	Content      []struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		Signature string          `json:"signature"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"content"`
	Usage antUsage `json:"usage"`
}

// antUsage is the token counts of a usage object.
type antUsage map[string]int

// UnmarshalJSON keeps the numbers of the object and skips the rest.
func (u *antUsage) UnmarshalJSON(data []byte) error {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	*u = antUsage{}
	for k, v := range all {
		var n int
		if json.Unmarshal(v, &n) == nil {
			(*u)[k] = n
		}
	}
	return nil
}

const hello = `{"model":"claude-test","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`

// streamed is hello as a stream.
var streamed = strings.Replace(hello, `"max_tokens"`, `"stream":true,"max_tokens"`, 1)

func TestAnthropicJSONAnswer(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.Step{Reasoning: "hm", Text: "hello", ToolCalls: []fakellm.ToolCall{{ID: "toolu_7", Name: "f", Arguments: `{"a":1}`}}})
	status, _, data := antPost(t, s, hello, nil)
	if status != http.StatusOK {
		t.Fatalf("status = %d: %s", status, data)
	}
	var m antMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.ID, "msg_") || m.Type != "message" || m.Role != "assistant" || m.Model != "claude-test" ||
		m.StopReason != "tool_use" || m.StopSequence != nil || !strings.Contains(string(data), `"stop_sequence":null`) {
		t.Fatalf("message = %s", data)
	}
	if len(m.Content) != 3 || m.Content[0].Type != "thinking" || m.Content[0].Thinking != "hm" || m.Content[0].Signature == "" ||
		m.Content[1].Text != "hello" || m.Content[2].ID != "toolu_7" || string(m.Content[2].Input) != `{"a":1}` {
		t.Fatalf("content = %s", data)
	}
	for _, k := range []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"} {
		if _, ok := m.Usage[k]; !ok {
			t.Fatalf("usage has no %s: %s", k, data)
		}
	}
}

func TestAnthropicStopReasons(t *testing.T) {
	t.Parallel()
	for scripted, want := range map[string]string{
		"": "end_turn", "stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use",
		"content_filter": "refusal", "pause_turn": "pause_turn",
	} {
		s := startServer(t, fakellm.Step{Text: "x", FinishReason: scripted})
		_, _, data := antPost(t, s, hello, nil)
		var m antMessage
		if err := json.Unmarshal(data, &m); err != nil || m.StopReason != want {
			t.Fatalf("finish %q: stop_reason %q, want %q (%v)", scripted, m.StopReason, want, err)
		}
	}
}

// sseEvents splits a stream into its event names and data.
func sseEvents(t *testing.T, data []byte) (names []string, payloads []map[string]any) {
	t.Helper()
	for _, ev := range strings.Split(strings.TrimSpace(string(data)), "\n\n") {
		name, rest, ok := strings.Cut(ev, "\n")
		if !ok || !strings.HasPrefix(name, "event: ") || !strings.HasPrefix(rest, "data: ") {
			t.Fatalf("malformed event %q", ev)
		}
		var payload map[string]any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(rest, "data: ")), &payload); err != nil {
			t.Fatalf("event data %q: %v", rest, err)
		}
		if payload["type"] != strings.TrimPrefix(name, "event: ") {
			t.Fatalf("event %q carries type %v", name, payload["type"])
		}
		names = append(names, strings.TrimPrefix(name, "event: "))
		payloads = append(payloads, payload)
	}
	return names, payloads
}

func TestAnthropicStream(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.Step{Reasoning: "hm", Text: "hello world", ToolCalls: []fakellm.ToolCall{{ID: "toolu_7", Name: "f", Arguments: `{"path":"x.txt"}`}}})
	status, header, data := antPost(t, s, streamed, nil)
	if status != http.StatusOK || header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status = %d, content type %q", status, header.Get("Content-Type"))
	}
	names, payloads := sseEvents(t, data)
	want := "message_start ping " +
		"content_block_start content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_delta content_block_delta content_block_stop " +
		"message_delta message_stop"
	if strings.Join(names, " ") != want {
		t.Fatalf("events = %v", names)
	}
	var deltas []string
	var args string
	for _, p := range payloads {
		if d, ok := p["delta"].(map[string]any); ok && p["type"] == "content_block_delta" {
			deltas = append(deltas, d["type"].(string))
			if d["type"] == "input_json_delta" {
				args += d["partial_json"].(string)
			}
		}
	}
	if strings.Join(deltas, " ") != "thinking_delta signature_delta text_delta text_delta input_json_delta input_json_delta input_json_delta" ||
		args != `{"path":"x.txt"}` {
		t.Fatalf("deltas = %v, arguments %q", deltas, args)
	}
	last := payloads[len(payloads)-2]
	if last["delta"].(map[string]any)["stop_reason"] != "tool_use" || last["usage"].(map[string]any)["output_tokens"] == nil {
		t.Fatalf("message_delta = %v", last)
	}
}

func TestAnthropicStreamEndsEarly(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.Step{Text: "one two three", EndAfterChunks: 2})
	_, _, data := antPost(t, s, streamed, nil)
	names, _ := sseEvents(t, data)
	if strings.Join(names, " ") != "message_start ping content_block_start content_block_delta" {
		t.Fatalf("events = %v", names)
	}
}

func TestAnthropicErrorTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		step fakellm.Step
		typ  string
	}{
		{fakellm.ErrorStep(400, "bad"), "invalid_request_error"},
		{fakellm.ErrorStep(401, "who"), "authentication_error"},
		{fakellm.ErrorStep(403, "no"), "permission_error"},
		{fakellm.ErrorStep(404, "where"), "not_found_error"},
		{fakellm.ErrorStep(413, "big"), "request_too_large"},
		{fakellm.ErrorStep(429, "slow"), "rate_limit_error"},
		{fakellm.ErrorStep(500, "oops"), "api_error"},
		{fakellm.ErrorStep(529, "busy"), "overloaded_error"},
		{fakellm.Step{Status: 400, ErrorType: "billing_error", ErrorMessage: "credit"}, "billing_error"},
	}
	for _, tc := range tests {
		s := startServer(t, tc.step)
		for _, body := range []string{hello, streamed} {
			status, _, data := antPost(t, s, body, nil)
			if status != tc.step.Status {
				t.Fatalf("status = %d, want %d", status, tc.step.Status)
			}
			if typ, msg := antError(t, data); typ != tc.typ || msg != tc.step.ErrorMessage {
				t.Fatalf("status %d: error %s %q, want %s %q", status, typ, msg, tc.typ, tc.step.ErrorMessage)
			}
			s.Push(tc.step)
		}
	}
	s := startServer(t, fakellm.Step{Status: 429, ErrorMessage: "slow", RetryAfter: "5"})
	if _, header, _ := antPost(t, s, hello, nil); header.Get("Retry-After") != "5" {
		t.Fatalf("Retry-After = %q", header.Get("Retry-After"))
	}
	// The server's own errors take the Anthropic shape too.
	s = startServer(t)
	status, _, data := antPost(t, s, hello, nil)
	if typ, _ := antError(t, data); status != 500 || typ != "api_error" {
		t.Fatalf("exhausted script: %d %s", status, typ)
	}
}

// cachedRequest has a system prompt of about n tokens with a breakpoint.
func cachedRequest(n int, question string) string {
	system, _ := json.Marshal(strings.Repeat("abcd", n))
	return `{"model":"claude-test","max_tokens":100,"system":[{"type":"text","text":` + string(system) +
		`,"cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"` + question + `"}]}`
}

func TestAnthropicPromptCache(t *testing.T) {
	t.Parallel()
	usage := func(t *testing.T, s *fakellm.Server, body string) antUsage {
		t.Helper()
		s.Push(fakellm.TextStep("ok"))
		status, _, data := antPost(t, s, body, nil)
		var m antMessage
		if err := json.Unmarshal(data, &m); err != nil || status != 200 {
			t.Fatalf("status %d (%v): %s", status, err, data)
		}
		return m.Usage
	}
	s := startServer(t)
	first := usage(t, s, cachedRequest(2000, "one"))
	if first["cache_creation_input_tokens"] < 2000 || first["cache_read_input_tokens"] != 0 || first["input_tokens"] <= 0 {
		t.Fatalf("first usage = %v", first)
	}
	// Another question after the same system prompt reads it.
	second := usage(t, s, cachedRequest(2000, "two"))
	if second["cache_read_input_tokens"] != first["cache_creation_input_tokens"] || second["cache_creation_input_tokens"] != 0 {
		t.Fatalf("second usage = %v (first %v)", second, first)
	}
	// A different prefix does not.
	third := usage(t, s, cachedRequest(2001, "one"))
	if third["cache_read_input_tokens"] != 0 || third["cache_creation_input_tokens"] == 0 {
		t.Fatalf("third usage = %v", third)
	}
	// A prefix under the minimum is not cached at all.
	for range 2 {
		if u := usage(t, s, cachedRequest(100, "one")); u["cache_read_input_tokens"] != 0 || u["cache_creation_input_tokens"] != 0 {
			t.Fatalf("short prefix usage = %v", u)
		}
	}
	// Step.Usage overrides the figures.
	s.Push(fakellm.Step{Text: "ok", Usage: &openai.Usage{PromptTokens: 7, CompletionTokens: 3,
		PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 5}}})
	_, _, data := antPost(t, s, cachedRequest(2000, "one"), nil)
	var m antMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Usage["input_tokens"] != 7 || m.Usage["cache_read_input_tokens"] != 5 || m.Usage["output_tokens"] != 3 {
		t.Fatalf("scripted usage = %v", m.Usage)
	}
	if got := s.Requests()[0].CacheBreakpoints(); len(got) != 1 || got[0] != "system.0" {
		t.Fatalf("breakpoints = %v", got)
	}
}
