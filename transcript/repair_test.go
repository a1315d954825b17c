package transcript

import (
	"reflect"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

func asst(ids ...string) openai.ChatCompletionMessage {
	m := openai.ChatCompletionMessage{Role: "assistant"}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: id, Type: "function", Function: openai.FunctionCall{Name: "t"}})
	}
	return m
}

func toolRes(id, content string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: "tool", ToolCallID: id, Content: content}
}

func text(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: "assistant", Content: s}
}

func withText(m openai.ChatCompletionMessage, s string) openai.ChatCompletionMessage {
	m.Content = s
	return m
}

func user(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: "user", Content: s}
}

func TestRepair(t *testing.T) {
	tests := []struct {
		name string
		in   []openai.ChatCompletionMessage
		want []openai.ChatCompletionMessage
	}{
		{"empty", nil, []openai.ChatCompletionMessage{}},
		{"complete pair untouched",
			[]openai.ChatCompletionMessage{user("hi"), asst("a"), toolRes("a", "ok")},
			[]openai.ChatCompletionMessage{user("hi"), asst("a"), toolRes("a", "ok")}},
		{"orphan result dropped",
			[]openai.ChatCompletionMessage{user("hi"), toolRes("x", "?"), asst()},
			[]openai.ChatCompletionMessage{user("hi"), asst()}},
		{"unanswered call gets stub at end",
			[]openai.ChatCompletionMessage{user("hi"), asst("a", "b"), toolRes("a", "ok")},
			[]openai.ChatCompletionMessage{user("hi"), asst("a", "b"), toolRes("a", "ok"), toolRes("b", UnansweredResult)}},
		{"unanswered call gets stub before next message",
			[]openai.ChatCompletionMessage{asst("a"), user("next")},
			[]openai.ChatCompletionMessage{asst("a"), toolRes("a", UnansweredResult), user("next")}},
		{"duplicate result dropped",
			[]openai.ChatCompletionMessage{asst("a"), toolRes("a", "1"), toolRes("a", "2")},
			[]openai.ChatCompletionMessage{asst("a"), toolRes("a", "1")}},
		{"consecutive users merged",
			[]openai.ChatCompletionMessage{user("a"), user("b"), asst()},
			[]openai.ChatCompletionMessage{user("a\n\nb"), asst()}},
		{"text then tool-call assistant merged",
			[]openai.ChatCompletionMessage{user("u"), text("thinking aloud"), asst("a"), toolRes("a", "ok")},
			[]openai.ChatCompletionMessage{user("u"), withText(asst("a"), "thinking aloud"), toolRes("a", "ok")}},
		{"assistant after tool calls is not merged across results",
			[]openai.ChatCompletionMessage{asst("a"), text("after")},
			[]openai.ChatCompletionMessage{asst("a"), toolRes("a", UnansweredResult), text("after")}},
		{"system and tool roles never merged",
			[]openai.ChatCompletionMessage{{Role: "system", Content: "s1"}, {Role: "system", Content: "s2"}},
			[]openai.ChatCompletionMessage{{Role: "system", Content: "s1"}, {Role: "system", Content: "s2"}}},
		{"empty contents merge without separators",
			[]openai.ChatCompletionMessage{text(""), text("x")},
			[]openai.ChatCompletionMessage{text("x")}},
		{"result of an older call dropped",
			[]openai.ChatCompletionMessage{asst("a"), toolRes("a", "1"), user("u"), toolRes("a", "late")},
			[]openai.ChatCompletionMessage{asst("a"), toolRes("a", "1"), user("u")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Repair(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Repair() =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestStripThinking(t *testing.T) {
	tests := []struct{ in, want string }{
		{"hello", "hello"},
		{"<think>plan</think>answer", "answer"},
		{"<THINK>a\nb</THINK>\n\n answer \n", "answer"},
		{"<think>never closed", ""},
		{"before <reasoning>x</reasoning> after", "before  after"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := StripThinking(tt.in); got != tt.want {
			t.Errorf("StripThinking(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
