package llm

// Table tests of the Ollama provider's pure functions: the endpoint's URL,
// the options, the conversion of messages and the reading of answers.

import (
	"encoding/json"
	"reflect"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

func TestOllamaChatURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", "http://localhost:11434/api/chat"},
		{"http://localhost:11434", "http://localhost:11434/api/chat"},
		{"http://localhost:11434/", "http://localhost:11434/api/chat"},
		{"http://localhost:11434/v1", "http://localhost:11434/api/chat"},
		{"http://localhost:11434/v1/", "http://localhost:11434/api/chat"},
		{" https://proxy.example.com/ollama/v1 ", "https://proxy.example.com/ollama/api/chat"},
		{"https://proxy.example.com/ollama?key=abc", "https://proxy.example.com/ollama/api/chat?key=abc"},
		{"gpu-box:11434/v1", "gpu-box:11434/api/chat"},
	}
	for _, tt := range tests {
		if got := ollamaChatURL(tt.in); got != tt.want {
			t.Errorf("ollamaChatURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOllamaOptions(t *testing.T) {
	t.Parallel()
	type opts = map[string]any
	tests := []struct {
		name      string
		extra     opts
		maxTokens int
		options   opts
		rest      opts
		err       bool
	}{
		{"nothing", nil, 0, nil, nil, false},
		{"cap only", nil, 512, opts{"num_predict": 512}, nil, false},
		{"num_ctx only", opts{"options": opts{"num_ctx": 32768}}, 0, opts{"num_ctx": 32768}, nil, false},
		{"merged", opts{"options": opts{"num_ctx": 32768}}, 512, opts{"num_ctx": 32768, "num_predict": 512}, nil, false},
		{"the cap wins", opts{"options": opts{"num_predict": 5}}, 512, opts{"num_predict": 512}, nil, false},
		{"other fields stay", opts{"options": opts{"num_ctx": 8}, "keep_alive": "5m"}, 0, opts{"num_ctx": 8}, opts{"keep_alive": "5m"}, false},
		{"typed options", opts{"options": map[string]int{"num_ctx": 8}}, 0, opts{"num_ctx": float64(8)}, nil, false},
		{"options not an object", opts{"options": []int{1}}, 0, nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			options, rest, err := ollamaOptions(tt.extra, tt.maxTokens)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if err == nil && (!reflect.DeepEqual(options, tt.options) || !reflect.DeepEqual(rest, tt.rest)) {
				t.Fatalf("options %v rest %v, want %v %v", options, rest, tt.options, tt.rest)
			}
		})
	}
}

func TestOllamaArgumentText(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{``, `{}`},
		{`null`, `{}`},
		{`{}`, `{}`},
		{`{ "path" : "a.txt",  "n": 1 }`, `{"path":"a.txt","n":1}`},
		{`"{\"path\":\"a\"}"`, `{"path":"a"}`},
		{`"  "`, `{}`},
		{`[1,2]`, `[1,2]`},
	}
	for _, tt := range tests {
		if got := ollamaArgumentText(json.RawMessage(tt.in)); got != tt.want {
			t.Errorf("ollamaArgumentText(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestOllamaFinish(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reason string
		calls  bool
		want   string
	}{
		{"stop", false, "stop"},
		{"length", false, "length"},
		{"length", true, "tool_calls"},
		{"stop", true, "tool_calls"},
		{"load", false, "stop"},
		{"", false, "stop"},
	}
	for _, tt := range tests {
		if got := ollamaFinish(tt.reason, tt.calls); got != tt.want {
			t.Errorf("ollamaFinish(%q, %v) = %s, want %s", tt.reason, tt.calls, got, tt.want)
		}
	}
}

func TestOllamaClass(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		msg    string
		want   turnapi.ErrorClass
	}{
		{404, `model "x" not found, try pulling it first`, turnapi.ClassModelNotFound},
		{400, `model 'x' not found`, turnapi.ClassModelNotFound},
		{400, "invalid options", turnapi.ClassBadRequest},
		{429, "slow down", turnapi.ClassRateLimit},
		{503, "server busy", turnapi.ClassOverloaded},
		{500, "llama runner process has terminated", turnapi.ClassServer},
		{500, "input exceeds maximum context length", turnapi.ClassContextOverflow},
	}
	for _, tt := range tests {
		if got := ollamaClass(tt.status, tt.msg); got != tt.want {
			t.Errorf("ollamaClass(%d, %q) = %s, want %s", tt.status, tt.msg, got, tt.want)
		}
	}
}

func TestOllamaErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"error":"model 'x' not found"}`, "model 'x' not found"},
		{`{"error":{"message":"from a proxy","type":"x"}}`, "from a proxy"},
		{`{"error":42}`, ""},
		{`<html>no</html>`, ""},
		{`{}`, ""},
	}
	for _, tt := range tests {
		if got := ollamaErrorText([]byte(tt.in)); got != tt.want {
			t.Errorf("ollamaErrorText(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOllamaCallID(t *testing.T) {
	t.Parallel()
	base := ollamaCallID("req", "m", "t1", 0, "todo", "{}")
	if again := ollamaCallID("req", "m", "t1", 0, "todo", "{}"); again != base {
		t.Fatalf("the same call got %s, then %s", base, again)
	}
	for _, other := range []string{
		ollamaCallID("req", "m", "t1", 1, "todo", "{}"),
		ollamaCallID("req", "m", "t2", 0, "todo", "{}"),
		ollamaCallID("req2", "m", "t1", 0, "todo", "{}"),
		ollamaCallID("req", "m", "t1", 0, "todo", `{"a":1}`),
	} {
		if other == base {
			t.Fatalf("two calls share the id %s", base)
		}
	}
	if base[:7] != "call_0_" {
		t.Fatalf("id %s does not start with the call's position", base)
	}
}

// TestOllamaMessages: the conversion of a conversation, and its repairs.
func TestOllamaMessages(t *testing.T) {
	t.Parallel()
	call := func(id, name, args string) openai.ToolCall {
		return openai.ToolCall{ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: args}}
	}
	thinking, _ := json.Marshal("mine")
	tests := []struct {
		name string
		in   Request
		want []ollamaMessage
	}{
		{"roles", Request{Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "sys"}, {Role: "developer", Content: "dev"}, {Role: "user", Content: "hi"},
			{Role: "assistant", Content: "hello"},
		}}, []ollamaMessage{{Role: "system", Content: "sys"}, {Role: "system", Content: "dev"}, {Role: "user", Content: "hi"},
			{Role: "assistant", Content: "hello"}}},
		{"results in the calls' order, a stray one dropped, a missing one answered", Request{Messages: []openai.ChatCompletionMessage{
			{Role: "assistant", ToolCalls: []openai.ToolCall{call("a", "read_file", `{"p":1}`), call("b", "terminal", "not json"), call("c", "todo", "")}},
			{Role: "tool", ToolCallID: "c", Content: "rc"}, {Role: "tool", ToolCallID: "zzz", Content: "stray"},
			{Role: "tool", ToolCallID: "a", Content: "ra"}, {Role: "tool", ToolCallID: "a", Content: "again"},
			{Role: "user", Content: "next"},
		}}, []ollamaMessage{
			{Role: "assistant", ToolCalls: []ollamaToolCall{
				{ID: "a", Function: ollamaFunctionCall{Name: "read_file", Arguments: json.RawMessage(`{"p":1}`)}},
				{ID: "b", Function: ollamaFunctionCall{Name: "terminal", Arguments: json.RawMessage(`{}`)}},
				{ID: "c", Function: ollamaFunctionCall{Name: "todo", Arguments: json.RawMessage(`{}`)}}}},
			{Role: "tool", Content: "ra", ToolName: "read_file", ToolCallID: "a"},
			{Role: "tool", Content: missingOutput, ToolName: "terminal", ToolCallID: "b"},
			{Role: "tool", Content: "rc", ToolName: "todo", ToolCallID: "c"},
			{Role: "user", Content: "next"},
		}},
		{"a call at the end answered; calls without or with a used id left out", Request{Messages: []openai.ChatCompletionMessage{
			{Role: "user", Content: "hi"},
			{Role: "tool", ToolCallID: "a", Content: "before its call"},
			{Role: "assistant", ToolCalls: []openai.ToolCall{call("a", "todo", "{}"), call("", "todo", "{}"), call("a", "todo", "{}")}},
		}}, []ollamaMessage{{Role: "user", Content: "hi"},
			{Role: "assistant", ToolCalls: []ollamaToolCall{{ID: "a", Function: ollamaFunctionCall{Name: "todo", Arguments: json.RawMessage(`{}`)}}}},
			{Role: "tool", Content: missingOutput, ToolName: "todo", ToolCallID: "a"},
		}},
		{"thinking replayed; another wire's state ignored; empty assistant dropped", Request{
			Replay: map[string]Replay{"a": {Wire: WireOllama, Data: thinking}, "b": {Wire: WireAnthropic, Data: thinking}},
			Messages: []openai.ChatCompletionMessage{
				{Role: "assistant", ToolCalls: []openai.ToolCall{call("a", "todo", "{}")}},
				{Role: "tool", ToolCallID: "a", Content: "ok"},
				{Role: "assistant", ToolCalls: []openai.ToolCall{call("b", "todo", "{}")}},
				{Role: "tool", ToolCallID: "b", Content: "ok"},
				{Role: "assistant"},
			}}, []ollamaMessage{
			{Role: "assistant", Thinking: "mine", ToolCalls: []ollamaToolCall{{ID: "a", Function: ollamaFunctionCall{Name: "todo", Arguments: json.RawMessage(`{}`)}}}},
			{Role: "tool", Content: "ok", ToolName: "todo", ToolCallID: "a"},
			{Role: "assistant", ToolCalls: []ollamaToolCall{{ID: "b", Function: ollamaFunctionCall{Name: "todo", Arguments: json.RawMessage(`{}`)}}}},
			{Role: "tool", Content: "ok", ToolName: "todo", ToolCallID: "b"},
		}},
		{"images from data URLs", Request{Messages: []openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{
			{Type: openai.ChatMessagePartTypeText, Text: "what is this?"},
			{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,iVBOR"}},
			{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "https://example.com/x.png"}},
		}}}}, []ollamaMessage{{Role: "user", Content: "what is this?", Images: []string{"iVBOR"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ollamaMessages(tt.in)
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(tt.want)
			if string(a) != string(b) {
				t.Fatalf("messages\n got %s\nwant %s", a, b)
			}
		})
	}
}
