//lint:file-ignore SA1019 max_tokens is the field OpenAI-compatible servers (and these wire formats) read; go-openai deprecates it only for OpenAI's o1 models

package fakellm_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// postResponses posts a raw body to the server's Responses endpoint and
// returns the status and body of the answer.
func postResponses(t *testing.T, s *fakellm.Server, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, s.URL()+"/responses", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// responsesIssued is what a tool-call answer of the fake handed out: the
// reasoning item and the call it came with.
type responsesIssued struct {
	reasoningID, encrypted, callID, name string
}

// issueResponsesCall makes the fake answer a tool call with reasoning and
// returns what it issued.
func issueResponsesCall(t *testing.T, s *fakellm.Server) responsesIssued {
	t.Helper()
	s.Push(fakellm.Step{Reasoning: "let me see", ToolCalls: []fakellm.ToolCall{{Name: "list_dir"}}})
	status, b := postResponses(t, s, `{"model":"fake-model","input":"hi","store":false,"include":["reasoning.encrypted_content"]}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, b)
	}
	var resp struct {
		Output []struct {
			Type, ID, Name   string
			EncryptedContent string `json:"encrypted_content"`
			Call             string `json:"call_id"`
		} `json:"output"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatal(err)
	}
	var got responsesIssued
	for _, o := range resp.Output {
		switch o.Type {
		case "reasoning":
			got.reasoningID, got.encrypted = o.ID, o.EncryptedContent
		case "function_call":
			got.callID, got.name = o.Call, o.Name
		}
	}
	if !strings.HasPrefix(got.reasoningID, "rs_") || got.encrypted == "" || got.callID == "" {
		t.Fatalf("issued %+v from %s", got, b)
	}
	return got
}

// responsesBody is a request body with the given input items (JSON texts).
func responsesBody(store string, items ...string) string {
	return fmt.Sprintf(`{"model":"fake-model","store":%s,"input":[{"role":"user","content":"hi"},%s]}`,
		store, strings.Join(items, ","))
}

func TestResponsesValidation(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	iss := issueResponsesCall(t, s)
	reasoning := func(id, enc string) string {
		return fmt.Sprintf(`{"type":"reasoning","id":%q,"summary":[],"encrypted_content":%q}`, id, enc)
	}
	call := fmt.Sprintf(`{"type":"function_call","call_id":%q,"name":%q,"arguments":"{}"}`, iss.callID, iss.name)
	output := fmt.Sprintf(`{"type":"function_call_output","call_id":%q,"output":"a b c"}`, iss.callID)
	tests := []struct {
		name, body string
		// in is part of the message; "" marks a request to accept.
		in string
	}{
		{"no model", `{"input":"hi"}`, "Missing required parameter: 'model'."},
		{"invalid json", `{"model":`, "reading the JSON body"},
		{"input of the wrong type", `{"model":"m","input":42}`, "Invalid type for 'input'"},
		{"output without its call", responsesBody("false", `{"type":"function_call_output","call_id":"call_zz","output":"x"}`),
			"No tool call found for function call output with call_id call_zz."},
		{"output before its call", responsesBody("false", output, call), "No tool call found for function call output with call_id " + iss.callID},
		{"call without its output", responsesBody("false", `{"type":"function_call","call_id":"call_q","name":"f","arguments":"{}"}`),
			"No tool output found for function call call_q."},
		{"call without its reasoning", responsesBody("false", call, output),
			"of type 'function_call' was provided without its required 'reasoning' item: '" + iss.reasoningID + "'."},
		{"reasoning after the call", responsesBody("false", call, reasoning(iss.reasoningID, iss.encrypted), output),
			"without its required 'reasoning' item"},
		{"reasoning of another id", responsesBody("false", reasoning("rs_other", iss.encrypted), call, output), "could not be verified"},
		{"forged encrypted content", responsesBody("false", reasoning(iss.reasoningID, "Zm9yZ2Vk"), call, output),
			"The encrypted content for item " + iss.reasoningID + " could not be verified."},
		{"reasoning without encrypted content, stateless", responsesBody("false",
			fmt.Sprintf(`{"type":"reasoning","id":%q,"summary":[]}`, iss.reasoningID), call, output),
			"Items are not persisted when `store` is set to false."},
		{"unknown item", responsesBody("false", `{"type":"item_reference","id":"x"}`), "Invalid value: 'item_reference'"},
		{"unknown role", responsesBody("false", `{"role":"robot","content":"x"}`), "Invalid value: 'robot'"},
		{"tool without a name", `{"model":"m","input":"hi","tools":[{"type":"function"}]}`, "'tools[0].name'"},
		{"carried reasoning", responsesBody("false", reasoning(iss.reasoningID, iss.encrypted), call, output), ""},
		{"unknown reasoning item, stored", responsesBody("true", `{"type":"reasoning","id":"rs_zz","summary":[]}`),
			"Item with id 'rs_zz' not found."},
		{"reasoning without encrypted content, stored", responsesBody("true",
			fmt.Sprintf(`{"type":"reasoning","id":%q,"summary":[]}`, iss.reasoningID), call, output), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.in == "" {
				s.Push(fakellm.TextStep("ok"))
			}
			status, b := postResponses(t, s, tc.body)
			if tc.in == "" {
				if status != http.StatusOK {
					t.Fatalf("refused: %d %s", status, b)
				}
				return
			}
			var body openai.ErrorResponse
			if err := json.Unmarshal(b, &body); err != nil || body.Error == nil {
				t.Fatalf("error body %s (%v)", b, err)
			}
			if status != http.StatusBadRequest || body.Error.Type != "invalid_request_error" ||
				!strings.Contains(body.Error.Message, tc.in) {
				t.Fatalf("status %d type %q message %q, want 400 invalid_request_error with %q",
					status, body.Error.Type, body.Error.Message, tc.in)
			}
		})
	}
}

// TestResponsesCallWithoutReasoning: a call the fake responsesIssued without a
// reasoning item goes back without one.
func TestResponsesCallWithoutReasoning(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.ToolStep(fakellm.ToolCall{ID: "call_plain", Name: "f"}), fakellm.TextStep("ok"))
	if status, b := postResponses(t, s, `{"model":"m","input":"hi","store":false}`); status != http.StatusOK {
		t.Fatalf("status %d: %s", status, b)
	}
	body := responsesBody("false", `{"type":"function_call","call_id":"call_plain","name":"f","arguments":"{}"}`,
		`{"type":"function_call_output","call_id":"call_plain","output":"x"}`)
	if status, b := postResponses(t, s, body); status != http.StatusOK {
		t.Fatalf("status %d: %s", status, b)
	}
}

// TestResponsesRequestRecord: a Responses request is recorded in chat
// form.
func TestResponsesRequestRecord(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.TextStep("ok"))
	body := `{"model":"fake-model","instructions":"be brief","max_output_tokens":99,"stream":false,
		"reasoning":{"effort":"low","summary":"auto"},
		"tools":[{"type":"function","name":"f","description":"does f","parameters":{"type":"object"},"strict":false},
			{"type":"web_search"}],
		"input":[
			{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},
			{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Let me look."}]},
			{"type":"function_call","call_id":"c1","name":"f","arguments":"{\"a\":1}"},
			{"type":"function_call","call_id":"c2","name":"g","arguments":"{}"},
			{"type":"function_call_output","call_id":"c1","output":"one"},
			{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"two"}]},
			{"role":"developer","content":"a note"},
			{"type":"function_call","call_id":"c3","name":"h","arguments":"{}"},
			{"type":"function_call_output","call_id":"c3","output":"three"}
		]}`
	if status, b := postResponses(t, s, body); status != http.StatusOK {
		t.Fatalf("status %d: %s", status, b)
	}
	got := s.Requests()[0]
	if got.Wire != fakellm.WireResponses || got.Body.Model != "fake-model" || got.Body.MaxTokens != 99 ||
		got.Body.ReasoningEffort != "low" || len(got.Body.Tools) != 1 || got.Body.Tools[0].Function.Name != "f" {
		t.Fatalf("request %+v", got.Body)
	}
	want := []struct {
		role, content, toolCallID string
		calls                     int
	}{
		{"system", "be brief", "", 0},
		{"user", "hi", "", 0},
		{"assistant", "Let me look.", "", 2},
		{"tool", "one", "c1", 0},
		{"tool", "two", "c2", 0},
		{"system", "a note", "", 0},
		{"assistant", "", "", 1},
		{"tool", "three", "c3", 0},
	}
	msgs := got.Body.Messages
	if len(msgs) != len(want) {
		t.Fatalf("%d messages, want %d: %+v", len(msgs), len(want), msgs)
	}
	for i, w := range want {
		m := msgs[i]
		if m.Role != w.role || m.Content != w.content || m.ToolCallID != w.toolCallID || len(m.ToolCalls) != w.calls {
			t.Errorf("message %d = %+v, want %+v", i, m, w)
		}
	}
	if c := msgs[2].ToolCalls; c[0].ID != "c1" || c[0].Function.Name != "f" || c[0].Function.Arguments != `{"a":1}` || c[1].ID != "c2" {
		t.Errorf("calls %+v", c)
	}
}

// TestResponsesReasoningRecord: a reasoning item becomes the reasoning of
// the assistant message that follows it.
func TestResponsesReasoningRecord(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	iss := issueResponsesCall(t, s)
	s.Push(fakellm.TextStep("ok"))
	body := responsesBody("false",
		fmt.Sprintf(`{"type":"reasoning","id":%q,"summary":[{"type":"summary_text","text":"let me see"}],"encrypted_content":%q}`,
			iss.reasoningID, iss.encrypted),
		fmt.Sprintf(`{"type":"function_call","call_id":%q,"name":%q,"arguments":"{}"}`, iss.callID, iss.name),
		fmt.Sprintf(`{"type":"function_call_output","call_id":%q,"output":"x"}`, iss.callID))
	if status, b := postResponses(t, s, body); status != http.StatusOK {
		t.Fatalf("status %d: %s", status, b)
	}
	msgs := s.Requests()[1].Body.Messages
	if len(msgs) != 3 || msgs[1].ReasoningContent != "let me see" || len(msgs[1].ToolCalls) != 1 || msgs[1].ToolCalls[0].ID != iss.callID {
		t.Fatalf("messages %+v", msgs)
	}
}

func TestResponsesAPIKey(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.WithAPIKey("right"))
	status, b := postResponses(t, s, `{"model":"m","input":"hi"}`)
	var body openai.ErrorResponse
	if err := json.Unmarshal(b, &body); err != nil || status != http.StatusUnauthorized || body.Error == nil ||
		body.Error.Code != "invalid_api_key" {
		t.Fatalf("status %d body %s (%v)", status, b, err)
	}
}
