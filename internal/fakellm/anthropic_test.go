//lint:file-ignore SA1019 max_tokens is the field OpenAI-compatible servers (and these wire formats) read; go-openai deprecates it only for OpenAI's o1 models

package fakellm_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// antPost sends a Messages request with the given headers set (a value
// of "" removes the header) and returns the status and decoded body.
func antPost(t *testing.T, s *fakellm.Server, body string, headers map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, s.URL()+"/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, data
}

// antError decodes an Anthropic error body.
func antError(t *testing.T, data []byte) (typ, message string) {
	t.Helper()
	var body struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &body); err != nil || body.Type != "error" {
		t.Fatalf("not an Anthropic error body (%v): %s", err, data)
	}
	return body.Error.Type, body.Error.Message
}

// toolLoop is a valid request that ends in a tool result; assistant is
// the content of its assistant message.
func toolLoop(thinking, assistant string) string {
	return `{"model":"claude-test","max_tokens":4096,` + thinking + `"messages":[
		{"role":"user","content":"read x"},
		{"role":"assistant","content":[` + assistant + `]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x is 1"}]}]}`
}

const toolUse = `{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"x"}}`

func TestAnthropicValidation(t *testing.T) {
	t.Parallel()
	user := func(content string) string { return `{"role":"user","content":` + content + `}` }
	asst := func(content string) string { return `{"role":"assistant","content":` + content + `}` }
	req := func(msgs ...string) string {
		return `{"model":"claude-test","max_tokens":100,"messages":[` + strings.Join(msgs, ",") + `]}`
	}
	cc := `,"cache_control":{"type":"ephemeral"}`
	thinkingOn := `"thinking":{"type":"enabled","budget_tokens":1024},`
	tests := []struct {
		name, body, want string
	}{
		{"no model", `{"max_tokens":10,"messages":[` + user(`"hi"`) + `]}`, "model: Field required"},
		{"no max_tokens", `{"model":"m","messages":[` + user(`"hi"`) + `]}`, "max_tokens: Field required"},
		{"zero max_tokens", `{"model":"m","max_tokens":0,"messages":[` + user(`"hi"`) + `]}`, "max_tokens: Input should be greater"},
		{"no messages", req(), "at least one message"},
		{"first message assistant", req(asst(`"hi"`), user(`"hi"`)), `first message must use the "user" role`},
		{"roles do not alternate", req(user(`"a"`), user(`"b"`)), "roles must alternate"},
		{"unknown role", req(user(`"a"`), `{"role":"system","content":"b"}`), "Input should be 'user' or 'assistant'"},
		{"empty text block", req(user(`[{"type":"text","text":""}]`)), "text content blocks must be non-empty"},
		{"blank text block", req(user(`[{"type":"text","text":"  \n"}]`)), "must contain non-whitespace text"},
		{"empty system text", `{"model":"m","max_tokens":10,"system":[{"type":"text","text":""}],"messages":[` + user(`"hi"`) + `]}`,
			"system.0.text: text content blocks must be non-empty"},
		{"empty message", req(user(`""`), asst(`"x"`)), "text content blocks must be non-empty"},
		{"no content", req(user(`[]`), asst(`"x"`)), "all messages must have non-empty content"},
		{"final assistant ends in white space", req(user(`"hi"`), asst(`"Sure: "`)), "cannot end with trailing whitespace"},
		{"result without its call", req(user(`"hi"`), asst(`"ok"`), user(`[{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]`)),
			"unexpected `tool_use_id` found in `tool_result` blocks: toolu_9"},
		{"result for an older call", req(user(`"hi"`), asst(`[`+toolUse+`]`), user(`[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]`),
			asst(`"ok"`), user(`[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]`)), "unexpected `tool_use_id`"},
		{"call without its result", req(user(`"hi"`), asst(`[`+toolUse+`]`), user(`"go on"`)),
			"`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"},
		{"call at the end", req(user(`"hi"`), asst(`[`+toolUse+`]`)), "without `tool_result` blocks"},
		{"bad tool id", req(user(`"hi"`), asst(`[{"type":"tool_use","id":"functions.read:0","name":"f","input":{}}]`),
			user(`[{"type":"tool_result","tool_use_id":"functions.read:0"}]`)), "String should match pattern"},
		{"input not an object", req(user(`"hi"`), asst(`[{"type":"tool_use","id":"t1","name":"f","input":[1]}]`),
			user(`[{"type":"tool_result","tool_use_id":"t1"}]`)), "Input should be a valid dictionary"},
		{"tool_use from the user", req(user(`[` + toolUse + `]`)), "only appear in assistant messages"},
		{"unknown block", req(user(`[{"type":"video","text":"x"}]`)), "does not match any of the expected tags"},
		{"small budget", `{"model":"m","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":512},"messages":[` + user(`"hi"`) + `]}`,
			"budget_tokens: Input should be greater than or equal to 1024"},
		{"budget over max_tokens", `{"model":"m","max_tokens":1024,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[` + user(`"hi"`) + `]}`,
			"`max_tokens` must be greater than `thinking.budget_tokens`"},
		{"thinking without its block", toolLoop(thinkingOn, toolUse), "Expected `thinking` or `redacted_thinking`, but found `tool_use`"},
		{"thinking with a forged signature", toolLoop(thinkingOn, `{"type":"thinking","thinking":"hm","signature":"Zm9yZ2Vk"},`+toolUse),
			"Invalid `signature` in `thinking` block"},
		{"thinking with a prefill", `{"model":"m","max_tokens":4096,` + thinkingOn + `"messages":[` + user(`"hi"`) + `,` + asst(`"Sure"`) + `]}`,
			"Expected `thinking` or `redacted_thinking`, but found `text`"},
		{"five breakpoints", `{"model":"m","max_tokens":10,"system":[{"type":"text","text":"s"` + cc + `}],"messages":[` +
			user(`[{"type":"text","text":"a"`+cc+`},{"type":"text","text":"b"`+cc+`}]`) + `,` + asst(`[{"type":"text","text":"c"`+cc+`}]`) + `,` +
			user(`[{"type":"text","text":"d"`+cc+`}]`) + `]}`, "A maximum of 4 blocks with cache_control may be provided. Found 5."},
		{"not json", `{"model":`, "not a valid anthropic request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, fakellm.TextStep("should not be served"))
			status, _, data := antPost(t, s, tc.body, nil)
			if status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400: %s", status, data)
			}
			typ, msg := antError(t, data)
			if typ != "invalid_request_error" || !strings.Contains(msg, tc.want) {
				t.Fatalf("error %s: %q, want one saying %q", typ, msg, tc.want)
			}
			if s.Remaining() != 1 {
				t.Fatal("a refused request consumed a step")
			}
		})
	}
}

func TestAnthropicValidRequests(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"string content": `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
		"prefill":        `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Sure:"}]}`,
		"tool loop":      toolLoop("", toolUse),
		"tool loop with thinking disabled": toolLoop(`"thinking":{"type":"disabled"},`,
			`{"type":"thinking","thinking":"old","signature":"unchecked"},`+toolUse),
		"redacted thinking": toolLoop(`"thinking":{"type":"enabled","budget_tokens":1024},`,
			`{"type":"redacted_thinking","data":"opaque"},`+toolUse),
		"four breakpoints": `{"model":"m","max_tokens":10,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],` +
			`"tools":[{"name":"f","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}],` +
			`"messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},` +
			`{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}]}]}`,
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, fakellm.TextStep("ok"))
			if status, _, data := antPost(t, s, body, nil); status != http.StatusOK {
				t.Fatalf("status = %d: %s", status, data)
			}
		})
	}
}

func TestAnthropicSignedThinkingAccepted(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.Step{Reasoning: "let me read x", ToolCalls: []fakellm.ToolCall{{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"x"}`}}},
		fakellm.TextStep("x is 1"))
	thinkingOn := `"thinking":{"type":"enabled","budget_tokens":1024},`
	status, _, data := antPost(t, s, `{"model":"m","max_tokens":4096,`+thinkingOn+`"messages":[{"role":"user","content":"read x"}]}`, nil)
	if status != http.StatusOK {
		t.Fatalf("status = %d: %s", status, data)
	}
	var msg struct {
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &msg); err != nil || len(msg.Content) != 2 {
		t.Fatalf("answer (%v): %s", err, data)
	}
	// The blocks go back as they came, as a client replays them.
	var blocks []string
	for _, b := range msg.Content {
		blocks = append(blocks, string(b))
	}
	status, _, data = antPost(t, s, toolLoop(thinkingOn, strings.Join(blocks, ",")), nil)
	if status != http.StatusOK {
		t.Fatalf("the fake refused its own signature: %d %s", status, data)
	}
}

func TestAnthropicHeaders(t *testing.T) {
	t.Parallel()
	body := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name    string
		headers map[string]string
		status  int
		typ     string
	}{
		{"x-api-key", map[string]string{"X-Api-Key": "secret"}, 200, ""},
		{"bearer token", map[string]string{"Authorization": "Bearer secret"}, 200, ""},
		{"wrong key", map[string]string{"X-Api-Key": "nope"}, 401, "authentication_error"},
		{"no key", nil, 401, "authentication_error"},
		{"no version", map[string]string{"X-Api-Key": "secret", "Anthropic-Version": ""}, 400, "invalid_request_error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, fakellm.WithAPIKey("secret"), fakellm.TextStep("ok"))
			status, _, data := antPost(t, s, body, tc.headers)
			if status != tc.status {
				t.Fatalf("status = %d, want %d: %s", status, tc.status, data)
			}
			if tc.typ != "" {
				if typ, _ := antError(t, data); typ != tc.typ {
					t.Fatalf("type = %s, want %s", typ, tc.typ)
				}
			}
		})
	}
}

func TestAnthropicDecodedRequest(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.TextStep("ok"))
	body := `{"model":"claude-test","max_tokens":2048,"stream":false,
		"system":[{"type":"text","text":"be brief"},{"type":"text","text":"be kind"}],
		"tools":[{"name":"read_file","description":"reads","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}],
		"messages":[
		{"role":"user","content":[{"type":"text","text":"read x"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]},
		{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"text","text":"reading"},` + toolUse + `]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"x is 1"}]},{"type":"text","text":"and?"}]}]}`
	if status, _, data := antPost(t, s, body, nil); status != http.StatusOK {
		t.Fatalf("status = %d: %s", status, data)
	}
	r := s.Requests()[0]
	b := r.Body
	if r.Wire != fakellm.WireAnthropic || b.Model != "claude-test" || b.MaxTokens != 2048 || b.Stream {
		t.Fatalf("request = %+v", b)
	}
	var got []string
	for _, m := range b.Messages {
		got = append(got, m.Role+":"+m.Content)
	}
	want := []string{"system:be brief\n\nbe kind", "user:", "assistant:reading", "tool:x is 1", "user:and?"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("messages = %q, want %q", got, want)
	}
	if parts := b.Messages[1].MultiContent; len(parts) != 2 || parts[0].Text != "read x" || parts[1].ImageURL.URL != "data:image/png;base64,AAAA" {
		t.Fatalf("user parts = %+v", parts)
	}
	a := b.Messages[2]
	if a.ReasoningContent != "hm" || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "toolu_1" || a.ToolCalls[0].Function.Arguments != `{"path":"x"}` {
		t.Fatalf("assistant = %+v", a)
	}
	if b.Messages[3].ToolCallID != "toolu_1" {
		t.Fatalf("tool message = %+v", b.Messages[3])
	}
	if len(b.Tools) != 1 || b.Tools[0].Function.Name != "read_file" || b.Tools[0].Function.Description != "reads" {
		t.Fatalf("tools = %+v", b.Tools)
	}
	params, _ := json.Marshal(b.Tools[0].Function.Parameters)
	if !bytes.Contains(params, []byte(`"path"`)) {
		t.Fatalf("parameters = %s", params)
	}
}
