//lint:file-ignore SA1019 max_tokens is the field OpenAI-compatible servers (and these wire formats) read; go-openai deprecates it only for OpenAI's o1 models

package fakellm_test

// Tests of the fake's Ollama native chat API (POST /api/chat): what it
// refuses, the chat form it records, and the shape of its answers.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// postOllama sends body to the server's /api/chat; it returns the status,
// the headers and the body of the answer.
func postOllama(t *testing.T, s *fakellm.Server, body string) (int, http.Header, []byte) {
	t.Helper()
	root := strings.TrimSuffix(s.URL(), "/v1")
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, root+"/api/chat", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil && !strings.Contains(err.Error(), "EOF") {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, data
}

// ollamaLine is one line of an answer, as a client reads it.
type ollamaLine struct {
	Model     string `json:"model"`
	CreatedAt string `json:"created_at"`
	Message   struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		Thinking  string `json:"thinking"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"message"`
	Done            bool   `json:"done"`
	DoneReason      string `json:"done_reason"`
	PromptEvalCount int    `json:"prompt_eval_count"`
	EvalCount       int    `json:"eval_count"`
}

// ndjsonLines reads an NDJSON body: every line one JSON object.
func ndjsonLines(t *testing.T, data []byte) []ollamaLine {
	t.Helper()
	var out []ollamaLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var l ollamaLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q is not a JSON object: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

const ollamaUser = `{"role":"user","content":"hi"}`

func TestOllamaRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, in string }{
		{"no model", `{"messages":[` + ollamaUser + `]}`, "model is required"},
		{"unknown role", `{"model":"m","messages":[{"role":"bot","content":"hi"}]}`, `invalid role "bot"`},
		{"developer role", `{"model":"m","messages":[{"role":"developer","content":"hi"}]}`, `invalid role "developer"`},
		{"arguments as text", `{"model":"m","messages":[{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":"{\"a\":1}"}}]}]}`, "want a JSON object"},
		{"arguments as a list", `{"model":"m","messages":[{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":[1]}}]}]}`, "want a JSON object"},
		{"content as parts", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, "cannot unmarshal"},
		{"num_predict not a number", `{"model":"m","messages":[` + ollamaUser + `],"options":{"num_predict":"many"}}`, "num_predict"},
		{"not json", `{"model":`, "not a valid ollama request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, fakellm.TextStep("never"))
			status, _, data := postOllama(t, s, tt.body)
			var body map[string]any
			if err := json.Unmarshal(data, &body); err != nil {
				t.Fatalf("error body %q: %v", data, err)
			}
			msg, _ := body["error"].(string)
			if status != http.StatusBadRequest || len(body) != 1 || !strings.Contains(msg, tt.in) {
				t.Fatalf("answer %d %s, want 400 {\"error\": ...%s...}", status, data, tt.in)
			}
			if s.Remaining() != 1 || s.Requests()[0].Status != http.StatusBadRequest {
				t.Fatal("a refused request used a step")
			}
		})
	}
	s := startServer(t, fakellm.TextStep("fine"))
	ok := `{"model":"m","stream":false,"messages":[{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":null}}]},{"role":"tool","content":"r","tool_name":"f"}]}`
	if status, _, data := postOllama(t, s, ok); status != http.StatusOK {
		t.Fatalf("null arguments: %d %s", status, data)
	}
}

// TestOllamaStreamShape: a stream is NDJSON: the thinking, the text in
// several lines, the complete tool calls on one line (arguments that are
// no object as {}, no id unless the script names one), then the done line
// with the done reason and the token counts. "stream" absent streams.
func TestOllamaStreamShape(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.Step{Reasoning: "think it over", Text: "hello big world",
		ToolCalls: []fakellm.ToolCall{{Name: "read_file", Arguments: `{"path": "a"}`}, {ID: "call_given", Name: "todo", Arguments: "not json"}},
		Usage:     &openai.Usage{PromptTokens: 11, CompletionTokens: 7}})
	status, h, data := postOllama(t, s, `{"model":"llama3.1:8b","messages":[`+ollamaUser+`]}`)
	if status != http.StatusOK || h.Get("Content-Type") != "application/x-ndjson" || bytes.Contains(data, []byte("data:")) {
		t.Fatalf("answer %d %s: %s", status, h.Get("Content-Type"), data)
	}
	lines := ndjsonLines(t, data)
	var thinking, content strings.Builder
	contentLines, callLines := 0, 0
	for i, l := range lines[:len(lines)-1] {
		if l.Done || l.Model != "llama3.1:8b" || l.CreatedAt == "" || l.Message.Role != "assistant" {
			t.Fatalf("line %d = %+v", i, l)
		}
		thinking.WriteString(l.Message.Thinking)
		content.WriteString(l.Message.Content)
		if l.Message.Content != "" {
			contentLines++
		}
		if len(l.Message.ToolCalls) > 0 {
			callLines++
			calls := l.Message.ToolCalls
			if len(calls) != 2 || string(calls[0].Function.Arguments) != `{"path":"a"}` || calls[0].ID != "" ||
				string(calls[1].Function.Arguments) != `{}` || calls[1].ID != "call_given" {
				t.Fatalf("tool calls line = %s", data)
			}
		}
	}
	if thinking.String() != "think it over" || content.String() != "hello big world" || contentLines < 2 || callLines != 1 {
		t.Fatalf("thinking %q, content %q in %d lines, %d call lines", thinking.String(), content.String(), contentLines, callLines)
	}
	done := lines[len(lines)-1]
	if !done.Done || done.DoneReason != "stop" || done.PromptEvalCount != 11 || done.EvalCount != 7 {
		t.Fatalf("done line = %+v", done)
	}
	if r := s.Requests()[0]; r.Wire != fakellm.WireOllama || !r.Body.Stream || r.Body.Model != "llama3.1:8b" {
		t.Fatalf("recorded wire %s stream %v model %s", r.Wire, r.Body.Stream, r.Body.Model)
	}
}

func TestOllamaJSONAnswer(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.Step{Text: "cut here", Reasoning: "hmm", FinishReason: "length"})
	status, h, data := postOllama(t, s, `{"model":"m","stream":false,"messages":[`+ollamaUser+`]}`)
	lines := ndjsonLines(t, data)
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || len(lines) != 1 {
		t.Fatalf("answer %d %s: %s", status, h.Get("Content-Type"), data)
	}
	l := lines[0]
	if !l.Done || l.DoneReason != "length" || l.Message.Content != "cut here" || l.Message.Thinking != "hmm" || l.EvalCount == 0 {
		t.Fatalf("answer = %+v", l)
	}
}

// TestOllamaRecordedForm: the native request is recorded in chat form:
// calls get ids (the same each time the history is sent), results the id
// of the call they answer (by id, else by tool name and order), the cap
// is max_tokens.
func TestOllamaRecordedForm(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.TextStep("a"), fakellm.TextStep("b"))
	body := `{"model":"m","options":{"num_ctx":32768,"num_predict":256},
		"tools":[{"type":"function","function":{"name":"read_file","description":"reads","parameters":{"type":"object"}}}],
		"messages":[{"role":"system","content":"sys"},` + ollamaUser + `,
		{"role":"assistant","content":"","thinking":"first this","tool_calls":[
			{"function":{"name":"read_file","arguments":{"path":"a"}}},
			{"function":{"name":"read_file","arguments":{"path":"b"}}},
			{"id":"call_t","function":{"name":"terminal","arguments":{}}}]},
		{"role":"tool","content":"ran","tool_name":"terminal","tool_call_id":"call_t"},
		{"role":"tool","content":"A","tool_name":"read_file"},
		{"role":"tool","content":"B","tool_name":"read_file"}]}`
	for range 2 {
		if status, _, data := postOllama(t, s, body); status != http.StatusOK {
			t.Fatalf("answer %d %s", status, data)
		}
	}
	reqs := s.Requests()
	r := reqs[0].Body
	if r.MaxTokens != 256 || len(r.Tools) != 1 || r.Tools[0].Function.Name != "read_file" || len(r.Messages) != 6 {
		t.Fatalf("recorded %+v", r)
	}
	a := r.Messages[2]
	if a.Role != "assistant" || a.ReasoningContent != "first this" || len(a.ToolCalls) != 3 ||
		a.ToolCalls[0].Function.Arguments != `{"path":"a"}` || a.ToolCalls[2].ID != "call_t" {
		t.Fatalf("assistant = %+v", a)
	}
	ids := a.ToolCalls
	if ids[0].ID == "" || ids[0].ID == ids[1].ID {
		t.Fatalf("derived ids %q and %q", ids[0].ID, ids[1].ID)
	}
	for i, want := range []string{"call_t", ids[0].ID, ids[1].ID} {
		if got := r.Messages[3+i]; got.Role != "tool" || got.ToolCallID != want {
			t.Fatalf("result %d answers %q, want %q", i, got.ToolCallID, want)
		}
	}
	if again := reqs[1].Body.Messages[2].ToolCalls; again[0].ID != ids[0].ID || again[1].ID != ids[1].ID {
		t.Fatal("the ids of a call differ between two sendings of the same history")
	}
}

// TestOllamaErrorsAndCuts: errors are {"error": ...} with the step's
// status and Retry-After; a stream ended early stops after that many
// content lines, without its done line.
func TestOllamaErrorsAndCuts(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.Step{Status: 429, ErrorMessage: "slow down", RetryAfter: "2"},
		fakellm.Step{Text: "one two three four", EndAfterChunks: 2})
	status, h, data := postOllama(t, s, `{"model":"m","messages":[`+ollamaUser+`]}`)
	if status != http.StatusTooManyRequests || h.Get("Retry-After") != "2" || strings.TrimSpace(string(data)) != `{"error":"slow down"}` {
		t.Fatalf("answer %d %q %s", status, h.Get("Retry-After"), data)
	}
	_, _, data = postOllama(t, s, `{"model":"m","messages":[`+ollamaUser+`]}`)
	lines := ndjsonLines(t, data)
	if len(lines) != 2 || lines[0].Message.Content+lines[1].Message.Content != "one two" || lines[1].Done {
		t.Fatalf("cut stream = %s", data)
	}
}
