package models

import (
	"errors"
	"strings"
	"testing"
)

// AppendReply stores a reply and its model call together: once, however
// often it is retried, and neither when the reply is invalid.
func TestAppendReply(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		call := ModelCall{Key: "t1/call/1", SessionID: "s1", TurnID: "t1", Purpose: PurposeTurn, Model: "m",
			PromptTokens: 10, CompletionTokens: 2, CostUSD: 0.5, Priced: true}
		reply := Message{SessionID: "s1", TurnID: "t1", IdemKey: "t1/call/1", Role: "assistant", Content: "hi"}
		first, err := s.AppendReply(ctx, call, []Message{reply})
		if err != nil || len(first) != 1 || first[0].ID == 0 || first[0].Content != "hi" {
			t.Fatalf("AppendReply = %+v, %v", first, err)
		}
		again, err := s.AppendReply(ctx, ModelCall{Key: call.Key, PromptTokens: 99}, []Message{reply})
		if err != nil || len(again) != 1 || again[0].ID != first[0].ID {
			t.Fatalf("AppendReply again = %+v, %v; want the stored reply", again, err)
		}
		got, err := s.ModelCallByKey(ctx, call.Key)
		if err != nil || got.PromptTokens != 10 || got.CostUSD != 0.5 || !got.Priced || got.CreatedAt.IsZero() {
			t.Fatalf("recorded call = %+v, %v; want the first record", got, err)
		}
		if msgs, err := s.Messages(ctx, "s1"); err != nil || len(msgs) != 1 {
			t.Fatalf("messages = %+v, %v", msgs, err)
		}

		bad := reply
		bad.IdemKey = strings.Repeat("k", 2*maxIdemKeyLen)
		if _, err := s.AppendReply(ctx, ModelCall{Key: "t1/call/2"}, []Message{bad}); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("AppendReply of an invalid message: %v", err)
		}
		if _, err := s.ModelCallByKey(ctx, "t1/call/2"); !errors.Is(err, ErrNotFound) {
			t.Errorf("the call of a reply not stored was recorded: %v", err)
		}
	})
}
