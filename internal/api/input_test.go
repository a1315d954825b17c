package api

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// shown is a turnText as one line per part, for comparisons.
func shown(t turnText) string {
	out := []string{"input=" + t.input()}
	for _, m := range t.prior {
		out = append(out, m.Role+":"+m.Content)
	}
	return strings.Join(out, " | ")
}

// wantParam checks err is a 400 naming param.
func wantParam(t *testing.T, err error, param string) {
	t.Helper()
	var e *apiError
	if !errors.As(err, &e) || e.status != 400 || e.Param != param || !strings.Contains(e.Message, param) {
		t.Fatalf("error %+v, want a 400 naming %s", err, param)
	}
}

func TestReadChat(t *testing.T) {
	msg := func(role, content string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: role, Content: content}
	}
	parts := func(role string, p ...openai.ChatMessagePart) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: role, MultiContent: p}
	}
	text := func(s string) openai.ChatMessagePart { return openai.ChatMessagePart{Type: "text", Text: s} }
	image := openai.ChatMessagePart{Type: "image_url", ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,AAAA"}}
	sys := func(s string) string { return instructionsOpen + "\n" + s + "\n" + instructionsClose + "\n\n" }
	for _, tt := range []struct {
		name  string
		in    []openai.ChatCompletionMessage
		want  string
		param string // the field a 400 names
	}{
		{"only the question", []openai.ChatCompletionMessage{msg("user", "q")}, "input=q", ""},
		{"a system message goes before the question", []openai.ChatCompletionMessage{msg("system", "be terse"), msg("user", "q")},
			"input=" + sys("be terse") + "q", ""},
		{"system and developer messages, in order, blank ones left out", []openai.ChatCompletionMessage{msg("system", "one"),
			msg("user", "a"), msg("developer", " two "), msg("system", "  "), msg("user", "q")},
			"input=" + sys("one\n\ntwo") + "q | user:a", ""},
		{"a conversation", []openai.ChatCompletionMessage{msg("user", "a"), msg("assistant", "b"), msg("user", "q")},
			"input=q | user:a | assistant:b", ""},
		{"tool traffic and blanks left out", []openai.ChatCompletionMessage{msg("user", "a"), {Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "1"}}},
			msg("tool", "out"), msg("assistant", " "), msg("assistant", "b"), msg("user", "q")}, "input=q | user:a | assistant:b", ""},
		{"after the last user message nothing", []openai.ChatCompletionMessage{msg("user", "a"), msg("assistant", "b")}, "input=a", ""},
		{"text parts", []openai.ChatCompletionMessage{parts("user", text("x"), text("y")), parts("user", text("q"))}, "input=q | user:x\ny", ""},
		{"system parts", []openai.ChatCompletionMessage{parts("system", text("s1"), text("s2")), msg("user", "q")}, "input=" + sys("s1\ns2") + "q", ""},
		{"an image in the question is its picture", []openai.ChatCompletionMessage{msg("system", "s"), parts("user", text("what is this?"), image)}, "input=" + sys("s") + "what is this?", ""},
		{"an image earlier is that message's picture", []openai.ChatCompletionMessage{parts("user", image), msg("user", "q")}, "input=q | user:", ""},
		{"an image in a system message", []openai.ChatCompletionMessage{parts("system", image), msg("user", "q")}, "", "messages[0].content[0]"},
		{"audio", []openai.ChatCompletionMessage{parts("user", openai.ChatMessagePart{Type: "input_audio"})}, "", "messages[0].content[0].type"},
		{"an unknown role", []openai.ChatCompletionMessage{msg("narrator", "x"), msg("user", "q")}, "", "messages[0].role"},
		{"no user message", []openai.ChatCompletionMessage{msg("system", "s")}, "", "messages"},
		{"an empty question after a system message", []openai.ChatCompletionMessage{msg("system", "s"), msg("user", " ")}, "", "messages[1].content"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readChat(tt.in)
			if tt.param != "" {
				wantParam(t, err, tt.param)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := shown(got); s != tt.want {
				t.Fatalf("got  %q\nwant %q", s, tt.want)
			}
		})
	}
}

func TestReadResponses(t *testing.T) {
	sys := func(s string) string { return instructionsOpen + "\n" + s + "\n" + instructionsClose + "\n\n" }
	for _, tt := range []struct {
		name, input, instructions string
		want, param               string
	}{
		{"a string", `"hello"`, "", "input=hello", ""},
		{"a string with instructions", `"hello"`, "answer in French", "input=" + sys("answer in French") + "hello", ""},
		{"messages", `[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"output_text","text":"b"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]}]`,
			"", "input=q | user:a | assistant:b", ""},
		{"instructions, then system messages", `[{"role":"system","content":"s"},{"role":"user","content":"q"}]`, "i",
			"input=" + sys("i\n\ns") + "q", ""},
		{"function calls left out", `[{"role":"user","content":"a"},{"type":"function_call","name":"f"},{"type":"function_call_output","output":"x"},{"role":"user","content":"q"}]`,
			"", "input=q | user:a", ""},
		{"an image is the message's picture", `[{"role":"user","content":[{"type":"input_text","text":"what?"},{"type":"input_image","image_url":"https://x/y.png"}]}]`, "", "input=what?", ""},
		{"a file", `[{"role":"user","content":"a"},{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]`, "", "", "input[1].content[0].type"},
		{"an unknown role", `[{"role":"critic","content":"x"},{"role":"user","content":"q"}]`, "", "", "input[0].role"},
		{"no user message", `[{"role":"assistant","content":"x"}]`, "", "", "input"},
		{"an empty string", `""`, "i", "", "input"},
		{"an empty question", `[{"role":"user","content":[]}]`, "", "", "input[0].content"},
		{"not messages", `42`, "", "", "input"},
		{"missing", ``, "", "", "input"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readResponses(json.RawMessage(tt.input), tt.instructions)
			if tt.param != "" {
				wantParam(t, err, tt.param)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := shown(got); s != tt.want {
				t.Fatalf("got  %q\nwant %q", s, tt.want)
			}
		})
	}
}
