package acpdoor

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// wire is an update as the editor receives it.
func wire(t *testing.T, u acp.SessionUpdate) string {
	t.Helper()
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTranslatorUpdates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		evs  []models.Event
		want []string // substrings of each update sent, in order
	}{
		{"reply text", []models.Event{{Kind: events.KindDelta, Data: "Hel"}, {Kind: events.KindDelta, Data: "lo"}},
			[]string{`"sessionUpdate":"agent_message_chunk"`, `"text":"lo"`}},
		{"reasoning is a thought", []models.Event{{Kind: events.KindReasoning, Data: "hmm"}},
			[]string{`{"content":{"text":"hmm","type":"text"},"sessionUpdate":"agent_thought_chunk"}`}},
		{"a retried call's repeated text is sent once", []models.Event{
			{Kind: events.KindAttempt, Data: `{"call":1,"attempt":1}`}, {Kind: events.KindDelta, Data: "Hello"},
			{Kind: events.KindAttempt, Data: `{"call":1,"attempt":2}`}, {Kind: events.KindDelta, Data: "Hello"}, {Kind: events.KindDelta, Data: " world"}},
			[]string{`"text":"Hello"`, `"text":" world"`}},
		{"a retried call that answers differently says so", []models.Event{
			{Kind: events.KindAttempt, Data: `{"call":1,"attempt":1}`}, {Kind: events.KindDelta, Data: "Hello"},
			{Kind: events.KindAttempt, Data: `{"call":1,"attempt":2}`}, {Kind: events.KindDelta, Data: "Goodbye"}},
			[]string{`"text":"Hello"`, `retried`, `"text":"\n\nGoodbye"`}},
		{"a tool call with a path", []models.Event{{Kind: events.KindToolStart, Data: `{"id":"c1","name":"read_file","args":"{\"path\":\"/w/a.go\"}"}`}},
			[]string{`{"kind":"read","locations":[{"path":"/w/a.go"}],"rawInput":{"path":"/w/a.go"},"sessionUpdate":"tool_call","status":"in_progress","title":"read_file: /w/a.go","toolCallId":"c1"}`}},
		{"a command", []models.Event{{Kind: events.KindToolStart, Data: `{"id":"c2","name":"terminal","args":"{\"command\":\"make\\n test\"}"}`}},
			[]string{`"title":"terminal: make test","toolCallId":"c2"`}},
		{"arguments that are not JSON stay raw", []models.Event{{Kind: events.KindToolStart, Data: `{"id":"c3","name":"patch","args":"{oops"}`}},
			[]string{`{"kind":"edit","rawInput":"{oops"`}},
		{"ends", []models.Event{{Kind: events.KindToolStart, Data: `{"id":"c1","name":"read_file"}`}, {Kind: events.KindToolStart, Data: `{"id":"c2","name":"terminal"}`},
			{Kind: events.KindToolEnd, Data: `{"id":"c1","name":"read_file"}`}, {Kind: events.KindToolEnd, Data: `{"id":"c2","name":"terminal","failed":true}`}},
			[]string{`"toolCallId":"c1"`, `"toolCallId":"c2"`, `{"sessionUpdate":"tool_call_update","status":"completed","toolCallId":"c1"}`, `{"sessionUpdate":"tool_call_update","status":"failed","toolCallId":"c2"}`}},
		{"a call refused before it ran is told whole", []models.Event{{Kind: events.KindToolEnd, Data: `{"id":"c3","name":"terminal","failed":true,"refused":"denied by the user"}`}},
			[]string{`{"content":[{"content":{"text":"denied by the user","type":"text"},"type":"content"}],"kind":"execute","sessionUpdate":"tool_call","status":"failed","title":"terminal","toolCallId":"c3"}`}},
		{"nothing for status, done and garbage", []models.Event{{Kind: events.KindStatus, Data: "x"}, {Kind: events.KindDone}, {Kind: events.KindToolStart, Data: "not json"}, {Kind: events.KindToolEnd, Data: `{}`}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tr translator
			var got []string
			for _, ev := range tt.evs {
				for _, u := range tr.updates(ev) {
					got = append(got, wire(t, u))
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d updates %v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("update %d = %s, want it to hold %s", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestStopReason(t *testing.T) {
	t.Parallel()
	boom := "model unreachable"
	tests := []struct {
		exit workflows.StopReason
		want acp.StopReason
	}{
		{workflows.StopTextResponse, acp.StopReasonEndTurn},
		{workflows.StopInterrupted, acp.StopReasonCancelled},
		{workflows.StopMaxIterations, acp.StopReasonMaxTurnRequests},
		{workflows.StopBudgetExhausted, acp.StopReasonMaxTurnRequests},
		{workflows.StopTruncated, acp.StopReasonMaxTokens},
		{workflows.StopThinkingExhausted, acp.StopReasonMaxTokens},
		{workflows.StopGuardrailHalt, acp.StopReasonRefusal},
		{workflows.StopError, ""},
		{workflows.StopInvalidTool, ""},
	}
	for _, tt := range tests {
		got, err := stopReason(workflows.ConversationResult{TurnExitReason: tt.exit, Error: &boom})
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.exit, got, tt.want)
		}
		var re *acp.RequestError
		if tt.want == "" && (!errors.As(err, &re) || !strings.Contains(re.Error(), boom)) {
			t.Errorf("%s: error %v, want one naming the failure", tt.exit, err)
		}
	}
}

func TestPromptText(t *testing.T) {
	t.Parallel()
	text := acp.ResourceBlock(acp.EmbeddedResourceResource{TextResourceContents: &acp.TextResourceContents{Uri: "file:///w/a.md", Text: "has ``` inside"}})
	blocks := []acp.ContentBlock{acp.TextBlock("fix it"), acp.ResourceLinkBlock("b.go", "file:///w/b.go"), text, acp.ImageBlock("AAAA", "image/png"), acp.TextBlock("thanks")}
	got := promptText(blocks, map[int]string{3: "[image attached: uploads/ab/shot.png (image/png, 4 B)]"})
	want := "fix it\n\n[b.go](file:///w/b.go)\n\nfile:///w/a.md:\n````\nhas ``` inside\n````\n\n[image attached: uploads/ab/shot.png (image/png, 4 B)]\n\nthanks"
	if got != want {
		t.Errorf("prompt text %q, want %q", got, want)
	}
	if promptText(nil, nil) != "" {
		t.Error("no blocks, some text")
	}
}

func TestHistoryUpdatesLeaveTheRunningTurnToItsEvents(t *testing.T) {
	t.Parallel()
	msgs := []models.Message{
		{TurnID: "t1", Role: "user", Content: "hi"},
		{TurnID: "t1", Role: "assistant", ToolCalls: []models.ToolCall{{ID: "c1", Function: models.FunctionCall{Name: "read_file", Arguments: `{"path":"a"}`}}}},
		{TurnID: "t1", Role: "tool", ToolCallID: "c1", Content: "data"},
		{TurnID: "t1", Role: "assistant", Content: "done"},
		{TurnID: "t2", Role: "user", Content: "again"},
		{TurnID: "t2", Role: "assistant", Content: "half an answer"},
	}
	var got []string
	for _, u := range historyUpdates(msgs, "t2") {
		got = append(got, wire(t, u))
	}
	want := []string{`{"content":{"text":"hi","type":"text"},"sessionUpdate":"user_message_chunk"}`, `"sessionUpdate":"tool_call","status":"in_progress","title":"read_file: a","toolCallId":"c1"}`,
		`{"sessionUpdate":"tool_call_update","status":"completed","toolCallId":"c1"}`, `{"content":{"text":"done","type":"text"},"sessionUpdate":"agent_message_chunk"}`,
		`{"content":{"text":"again","type":"text"},"sessionUpdate":"user_message_chunk"}`}
	if len(got) != len(want) {
		t.Fatalf("updates %v", got)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("update %d = %s, want %s", i, got[i], want[i])
		}
	}
}

func TestCheckLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line, want string // want: "" to pass the line on, else a substring of the reply
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, ""},
		{`{"jsonrpc":"2.0","method":"session/cancel","params":{}}`, ""},
		{`{"jsonrpc":"2.0","id":"7","result":{}}`, ""},
		{`{not json`, `"id":null,"error":{"code":-32700,"message":"Parse error"`},
		{`[{"jsonrpc":"2.0","id":1,"method":"x"}]`, `"code":-32600`},
		{`42`, `"code":-32600`},
		{`{"id":3,"method":"initialize"}`, `"id":3,"error":{"code":-32600`},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`, `"id":null,"error":{"code":-32600`},
		{`{"jsonrpc":"2.0","id":4,"method":5}`, `"id":4,"error":{"code":-32600`},
		{`{"jsonrpc":"2.0"}`, `neither a method nor an id`},
		{`{"jsonrpc":"2.0","id":5,"method":""}`, `"id":5,"error":{"code":-32600`},
		{`{"jsonrpc":"2.0","id":6,"error":"x"}`, `not JSON-RPC`},
		{`{"jsonrpc":"2.0","id":6,"error":{"code":"x"}}`, `not JSON-RPC`},
		{`{"jsonrpc":"2.0","id":6,"error":{"code":-1,"message":"no"}}`, ""},
	}
	for _, tt := range tests {
		got := string(checkLine([]byte(tt.line), nil))
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("checkLine(%s) = %q, want %q", tt.line, got, tt.want)
		}
	}
	if got := string(checkLine(nil, errLineTooLong)); !strings.Contains(got, "10 MiB") {
		t.Errorf("a long line: %q", got)
	}
}

func TestParseCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text, name, args string
		ok               bool
	}{
		{"/usage", "usage", "", true},
		{"  /goal  ship the release  ", "goal", "ship the release", true},
		{"/background run the tests", "background", "run the tests", true},
		{"/status", "status", "", true},
		{"/compact", "compact", "", true},
		{"/teleport now", "", "", false},
		{"usage", "", "", false},
		{"/", "", "", false},
		{"please /usage", "", "", false},
	}
	for _, tt := range tests {
		name, args, ok := parseCommand(tt.text)
		if name != tt.name || args != tt.args || ok != tt.ok {
			t.Errorf("parseCommand(%q) = %q, %q, %v", tt.text, name, args, ok)
		}
	}
	got := wire(t, commandsUpdate())
	for _, want := range []string{`"sessionUpdate":"available_commands_update"`, `"name":"compact"`, `"input":{"hint":"the goal"}`} {
		if !strings.Contains(got, want) {
			t.Errorf("commands update %s lacks %s", got, want)
		}
	}
}
