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

func withReasoning(m openai.ChatCompletionMessage, s string) openai.ChatCompletionMessage {
	m.ReasoningContent = s
	return m
}

func user(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: "user", Content: s}
}

func TestRepair(t *testing.T) {
	t.Parallel()
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

		// One batch of parallel calls stored as two messages (Hermes:
		// test_repair_merges_parallel_tool_calls_split_across_assistants):
		// both real results kept, no stub for a call that ran.
		{"batch split across two assistant messages",
			[]openai.ChatCompletionMessage{user("run both"), asst("A"), asst("B"), toolRes("A", "a"), toolRes("B", "b")},
			[]openai.ChatCompletionMessage{user("run both"), asst("A", "B"), toolRes("A", "a"), toolRes("B", "b")}},
		{"batch split across three assistant messages",
			[]openai.ChatCompletionMessage{asst("c1"), asst("c2"), asst("c3"), toolRes("c1", "1"), toolRes("c2", "2"), toolRes("c3", "3")},
			[]openai.ChatCompletionMessage{asst("c1", "c2", "c3"), toolRes("c1", "1"), toolRes("c2", "2"), toolRes("c3", "3")}},
		{"split batch keeps both texts and reasoning",
			[]openai.ChatCompletionMessage{withReasoning(withText(asst("a"), "x"), "thinking A"), withText(asst("b"), "y"), toolRes("a", "1"), toolRes("b", "2")},
			[]openai.ChatCompletionMessage{withReasoning(withText(asst("a", "b"), "x\n\ny"), "thinking A"), toolRes("a", "1"), toolRes("b", "2")}},
		{"rounds separated by a result stay apart",
			[]openai.ChatCompletionMessage{asst("t1"), toolRes("t1", "done"), asst("t2"), toolRes("t2", "done2")},
			[]openai.ChatCompletionMessage{asst("t1"), toolRes("t1", "done"), asst("t2"), toolRes("t2", "done2")}},
		{"results in another order are put in call order",
			[]openai.ChatCompletionMessage{asst("a", "b"), toolRes("b", "2"), toolRes("a", "1")},
			[]openai.ChatCompletionMessage{asst("a", "b"), toolRes("a", "1"), toolRes("b", "2")}},
		{"a result parked after another message is moved up, not stubbed",
			[]openai.ChatCompletionMessage{asst("a"), user("u"), toolRes("a", "real")},
			[]openai.ChatCompletionMessage{asst("a"), toolRes("a", "real"), user("u")}},
		{"a result never crosses a later call with the same id",
			[]openai.ChatCompletionMessage{asst("a"), user("u"), asst("a"), toolRes("a", "second")},
			[]openai.ChatCompletionMessage{asst("a"), toolRes("a", UnansweredResult), user("u"), asst("a_2"), toolRes("a_2", "second")}},

		// The same id twice in one message: one result each, the second
		// renamed with its result.
		{"same call id twice gets one result each",
			[]openai.ChatCompletionMessage{asst("Y", "Y"), toolRes("Y", "r1"), toolRes("Y", "r2")},
			[]openai.ChatCompletionMessage{asst("Y", "Y_2"), toolRes("Y", "r1"), toolRes("Y_2", "r2")}},
		{"same call id twice with one result",
			[]openai.ChatCompletionMessage{asst("Y", "Y"), toolRes("Y", "r1")},
			[]openai.ChatCompletionMessage{asst("Y", "Y_2"), toolRes("Y", "r1"), toolRes("Y_2", UnansweredResult)}},
		{"an id reused by a later reply is renamed",
			[]openai.ChatCompletionMessage{asst("call_0"), toolRes("call_0", "1"), asst("call_0"), toolRes("call_0", "2")},
			[]openai.ChatCompletionMessage{asst("call_0"), toolRes("call_0", "1"), asst("call_0_2"), toolRes("call_0_2", "2")}},
		{"a renamed id does not take one in use",
			[]openai.ChatCompletionMessage{asst("a", "a", "a_2"), toolRes("a", "1"), toolRes("a", "2"), toolRes("a_2", "3")},
			[]openai.ChatCompletionMessage{asst("a", "a_3", "a_2"), toolRes("a", "1"), toolRes("a_3", "2"), toolRes("a_2", "3")}},
		{"an empty call id gets one",
			[]openai.ChatCompletionMessage{asst(""), toolRes("", "r")},
			[]openai.ChatCompletionMessage{asst("call_2"), toolRes("call_2", "r")}},

		// Empty user messages are never sent (Hermes:
		// test_repair_preserves_user_content_when_one_side_empty).
		{"empty user merged into the next keeps its text",
			[]openai.ChatCompletionMessage{user(""), user("real message")},
			[]openai.ChatCompletionMessage{user("real message")}},
		{"white-space user merged into the previous",
			[]openai.ChatCompletionMessage{user("real"), user(" \n\t ")},
			[]openai.ChatCompletionMessage{user("real")}},
		{"a lone empty user message says so",
			[]openai.ChatCompletionMessage{{Role: "system", Content: "s"}, user("   ")},
			[]openai.ChatCompletionMessage{{Role: "system", Content: "s"}, user(EmptyUserMessage)}},
		{"empty user between results and an answer",
			[]openai.ChatCompletionMessage{user("q"), asst("a"), toolRes("a", "ok"), user(""), text("done")},
			[]openai.ChatCompletionMessage{user("q"), asst("a"), toolRes("a", "ok"), user(EmptyUserMessage), text("done")}},
		{"valid dialog untouched",
			[]openai.ChatCompletionMessage{user("Q1"), asst("t1"), toolRes("t1", "out"), user("Q2")},
			[]openai.ChatCompletionMessage{user("Q1"), asst("t1"), toolRes("t1", "out"), user("Q2")}},
		{"a user message with a picture stays as it is",
			[]openai.ChatCompletionMessage{pictured("look", "data:image/png;base64,AA"), text("a cat")},
			[]openai.ChatCompletionMessage{pictured("look", "data:image/png;base64,AA"), text("a cat")}},
		{"a picture alone is not an empty message",
			[]openai.ChatCompletionMessage{pictured("", "https://example.com/a.png")},
			[]openai.ChatCompletionMessage{pictured("", "https://example.com/a.png")}},
		{"user messages around one with a picture merge into parts",
			[]openai.ChatCompletionMessage{user("first"), pictured("look", "data:image/png;base64,AA"), user("  "), user("and then")},
			[]openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{
				textPart("first"), textPart("look"), imagePart("data:image/png;base64,AA"), textPart("and then")}}}},
		{"two messages with pictures merge",
			[]openai.ChatCompletionMessage{pictured("one", "https://example.com/1.png"), pictured("two", "https://example.com/2.png")},
			[]openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{
				textPart("one"), imagePart("https://example.com/1.png"), textPart("two"), imagePart("https://example.com/2.png")}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := cloneMessages(tt.in)
			got := Repair(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Repair() =\n%+v\nwant\n%+v", got, tt.want)
			}
			if !reflect.DeepEqual(tt.in, in) {
				t.Fatalf("Repair modified its input:\n%+v\nwas\n%+v", tt.in, in)
			}
		})
	}
}

func textPart(s string) openai.ChatMessagePart {
	return openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: s}
}

func imagePart(url string) openai.ChatMessagePart {
	return openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: url}}
}

// pictured is a user message of text (none when empty) and a picture.
func pictured(s, url string) openai.ChatCompletionMessage {
	m := openai.ChatCompletionMessage{Role: "user"}
	if s != "" {
		m.MultiContent = append(m.MultiContent, textPart(s))
	}
	m.MultiContent = append(m.MultiContent, imagePart(url))
	return m
}

func cloneMessages(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	if msgs == nil {
		return nil
	}
	out := make([]openai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		m.ToolCalls = append([]openai.ToolCall(nil), m.ToolCalls...)
		m.MultiContent = append([]openai.ChatMessagePart(nil), m.MultiContent...)
		out[i] = m
	}
	return out
}

func TestStripThinking(t *testing.T) {
	t.Parallel()
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
