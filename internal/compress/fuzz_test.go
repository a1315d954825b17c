package compress

import (
	"fmt"
	"testing"

	"github.com/talaria-agent/talaria/models"
)

// fuzzMessages builds a conversation from data: each byte picks a message
// kind; tool-call groups may answer calls out of order, lose results or be
// interleaved with user (steer) messages, and orphan tool results occur.
func fuzzMessages(data []byte) []models.Message {
	var msgs []models.Message
	var open []string // calls not yet answered
	next := 0
	for _, b := range data {
		switch b % 6 {
		case 0:
			msgs = append(msgs, models.Message{Role: "user", Content: "u"})
		case 1:
			msgs = append(msgs, models.Message{Role: "system", Content: "s"})
		case 2:
			msgs = append(msgs, models.Message{Role: "assistant", Content: "a"})
		case 3:
			m := models.Message{Role: "assistant"}
			for k := 0; k <= int(b>>6); k++ {
				id := fmt.Sprint("c", next)
				next++
				m.ToolCalls = append(m.ToolCalls, models.ToolCall{ID: id, Function: models.FunctionCall{Name: "f"}})
				open = append(open, id)
			}
			msgs = append(msgs, m)
		case 4: // answer an open call, chosen by the high bits
			if len(open) == 0 {
				continue
			}
			i := int(b>>3) % len(open)
			msgs = append(msgs, models.Message{Role: "tool", ToolCallID: open[i]})
			open = append(open[:i], open[i+1:]...)
		case 5: // orphan result, or one without an ID
			id := ""
			if b&8 != 0 {
				id = "orphan"
			}
			msgs = append(msgs, models.Message{Role: "tool", ToolCallID: id})
		}
	}
	for i := range msgs {
		msgs[i].IdemKey = fmt.Sprint(i)
	}
	return msgs
}

func FuzzSplit(f *testing.F) {
	f.Add(int8(3), int8(20), []byte{1, 0, 3, 4, 2, 0})
	f.Add(int8(1), int8(1), []byte{0, 3, 0, 4, 4, 2, 0, 3, 4, 0})
	f.Add(int8(0), int8(0), []byte{5, 13, 0, 195, 4, 12, 0, 20, 28, 2})
	f.Add(int8(-4), int8(2), []byte{})
	f.Add(int8(2), int8(3), []byte{0, 2, 0, 2, 67, 0, 4, 2, 12, 0, 2, 0, 2})
	f.Fuzz(func(t *testing.T, first, last int8, data []byte) {
		msgs := fuzzMessages(data)
		p := Split(msgs, int(first), int(last))

		seg := make([]int, 0, len(msgs)) // segment of each input message
		var all []models.Message
		for s, part := range [][]models.Message{p.Head, p.Middle, p.Tail} {
			for _, m := range part {
				all = append(all, m)
				seg = append(seg, s)
			}
		}
		if len(all) != len(msgs) {
			t.Fatalf("got %d messages, want %d", len(all), len(msgs))
		}
		for i := range msgs {
			if all[i].IdemKey != msgs[i].IdemKey {
				t.Fatalf("message %d is %q, want %q", i, all[i].IdemKey, msgs[i].IdemKey)
			}
		}
		if len(p.Middle) > 0 && p.Middle[0].Role == "tool" {
			t.Fatal("middle starts with a tool result")
		}
		if len(p.Tail) > 0 && p.Tail[0].Role == "tool" && len(p.Head)+len(p.Middle) > 0 {
			t.Fatal("tail starts with a tool result")
		}
		caller := map[string]int{}
		for j, m := range msgs {
			if m.Role == "tool" {
				if k, ok := caller[m.ToolCallID]; ok && seg[k] != seg[j] {
					t.Fatalf("result %d (call %q) separated from its call at %d", j, m.ToolCallID, k)
				}
			}
			for _, tc := range m.ToolCalls {
				caller[tc.ID] = j
			}
		}
		if len(p.Middle) > 0 {
			keepFirst := int(first)
			if keepFirst <= 0 {
				keepFirst = DefaultKeepFirst
			}
			if len(p.Head) < keepFirst {
				t.Fatalf("head has %d messages, fewer than %d", len(p.Head), keepFirst)
			}
		}
	})
}
