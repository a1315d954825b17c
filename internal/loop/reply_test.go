package loop

import "testing"

func TestClassifyReply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   ReplyShape
		want ReplyKind
	}{
		{"text", ReplyShape{VisibleChars: 5, FinishReason: "stop"}, ReplyText},
		{"text without finish reason", ReplyShape{VisibleChars: 5}, ReplyText},
		{"text and reasoning", ReplyShape{VisibleChars: 5, ReasoningChars: 9, FinishReason: "stop"}, ReplyText},
		{"tool calls", ReplyShape{ToolCalls: 2, FinishReason: "tool_calls"}, ReplyToolCalls},
		{"tool calls with text", ReplyShape{ToolCalls: 1, VisibleChars: 3, FinishReason: "tool_calls"}, ReplyToolCalls},
		{"tool call cut off by length", ReplyShape{ToolCalls: 1, FinishReason: "length"}, ReplyToolCallCutOff},
		{"truncated args without length", ReplyShape{ToolCalls: 2, TruncatedArgs: 1, FinishReason: "tool_calls"}, ReplyToolCallCutOff},
		{"text cut off", ReplyShape{VisibleChars: 5, FinishReason: "length"}, ReplyTextCutOff},
		{"reasoning cut off", ReplyShape{ReasoningChars: 5, FinishReason: "length"}, ReplyReasoningCutOff},
		{"reasoning only", ReplyShape{ReasoningChars: 5, FinishReason: "stop"}, ReplyReasoningOnly},
		{"empty", ReplyShape{FinishReason: "stop"}, ReplyEmpty},
		{"empty cut off", ReplyShape{FinishReason: "length"}, ReplyEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ClassifyReply(tt.in); got != tt.want {
				t.Fatalf("ClassifyReply(%+v) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestReplyKindDiscarded(t *testing.T) {
	t.Parallel()
	kept := map[ReplyKind]bool{ReplyText: true, ReplyToolCalls: true}
	for k := ReplyText; k <= ReplyToolCallCutOff; k++ {
		if k.Discarded() == kept[k] {
			t.Errorf("%s.Discarded() = %v", k, k.Discarded())
		}
		if k.String() == "reply_kind(?)" {
			t.Errorf("kind %d has no name", k)
		}
	}
}
