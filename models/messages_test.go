package models

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gormschema "gorm.io/gorm/schema"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

func TestAppendMessagesIdempotent(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		batch := []Message{
			userMessage("s", "t1/0", "first"),
			userMessage("s", "t1/1", "second"),
			userMessage("s", "t1/2", "third"),
		}
		first, err := s.AppendMessages(t.Context(), batch)
		if err != nil {
			t.Fatalf("AppendMessages: %v", err)
		}
		ids := messageIDs(first)
		if !slices.IsSorted(ids) || ids[0] == 0 || ids[0] == ids[1] || ids[1] == ids[2] {
			t.Fatalf("IDs = %v, want increasing non-zero IDs", ids)
		}

		// A retry, even with changed content and IDs, returns the stored rows.
		retry := slices.Clone(batch)
		for i := range retry {
			retry[i].Content = "changed"
			retry[i].ID = 999
		}
		again, err := s.AppendMessages(t.Context(), retry)
		if err != nil {
			t.Fatalf("AppendMessages retry: %v", err)
		}
		if !reflect.DeepEqual(again, first) {
			t.Errorf("retry returned %+v, want %+v", again, first)
		}

		// A batch mixing stored and new messages keeps the stored ones and
		// appends the new one after them.
		mixed, err := s.AppendMessages(t.Context(), []Message{batch[2], userMessage("s", "t2/0", "fourth"), batch[0]})
		if err != nil {
			t.Fatalf("AppendMessages mixed: %v", err)
		}
		if mixed[0].ID != ids[2] || mixed[2].ID != ids[0] || mixed[1].ID <= ids[2] {
			t.Errorf("mixed IDs = %v, want [%d, >%d, %d]", messageIDs(mixed), ids[2], ids[2], ids[0])
		}

		// A key repeated inside one batch is stored once.
		dup, err := s.AppendMessages(t.Context(), []Message{userMessage("s", "t3/0", "fifth"), userMessage("s", "t3/0", "fifth")})
		if err != nil {
			t.Fatalf("AppendMessages duplicate keys: %v", err)
		}
		if dup[0].ID != dup[1].ID {
			t.Errorf("duplicate keys got IDs %v, want one ID", messageIDs(dup))
		}

		all, err := s.Messages(t.Context(), "s")
		if err != nil {
			t.Fatalf("Messages: %v", err)
		}
		var contents []string
		for _, m := range all {
			contents = append(contents, m.Content)
		}
		if want := []string{"first", "second", "third", "fourth", "fifth"}; !slices.Equal(contents, want) {
			t.Errorf("contents = %q, want %q", contents, want)
		}
	})
}

func TestAppendMessagesConcurrentRetries(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		batch := make([]Message, 5)
		for i := range batch {
			batch[i] = userMessage("s", fmt.Sprintf("turn/%d", i), fmt.Sprint(i))
		}
		const n = 8
		results := make([][]Message, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { results[i], errs[i] = s.AppendMessages(t.Context(), batch) })
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("AppendMessages %d: %v", i, errs[i])
			}
			if !slices.Equal(messageIDs(results[i]), messageIDs(results[0])) {
				t.Errorf("caller %d got IDs %v, caller 0 got %v", i, messageIDs(results[i]), messageIDs(results[0]))
			}
		}
		all, err := s.Messages(t.Context(), "s")
		if err != nil {
			t.Fatalf("Messages: %v", err)
		}
		if !slices.Equal(messageIDs(all), messageIDs(results[0])) {
			t.Errorf("stored IDs %v, want %v", messageIDs(all), messageIDs(results[0]))
		}
	})
}

func TestAppendMessagesInvalid(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		valid := userMessage("s", "ok", "fine")
		tests := []struct {
			name string
			msg  Message
		}{
			{"empty idempotency key", userMessage("s", "", "x")},
			{"empty session", userMessage("", "k", "x")},
			{"long idempotency key", userMessage("s", strings.Repeat("k", maxIdemKeyLen+1), "x")},
			{"long turn ID", Message{SessionID: "s", IdemKey: "k", TurnID: strings.Repeat("t", maxTurnIDLen+1)}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := s.AppendMessages(t.Context(), []Message{valid, tt.msg})
				if !errors.Is(err, ErrInvalidArgument) {
					t.Errorf("error = %v, want ErrInvalidArgument", err)
				}
			})
		}
		if all, err := s.Messages(t.Context(), "s"); err != nil || len(all) != 0 {
			t.Errorf("after rejected batches: %d messages, %v; want none stored", len(all), err)
		}
		if got, err := s.AppendMessages(t.Context(), nil); err != nil || len(got) != 0 {
			t.Errorf("AppendMessages(nil) = %v, %v", got, err)
		}
	})
}

func TestMessageFieldsRoundTrip(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		tests := []struct {
			name string
			msg  Message
		}{
			{"user", Message{Role: "user", Content: "héllo ✓\nsecond line"}},
			{"system", Message{Role: "system", Content: strings.Repeat("long prompt ", 2000)}},
			{"assistant without calls", Message{Role: "assistant", Content: "done", Reasoning: "thought", FinishReason: "stop"}},
			{"assistant with empty call list", Message{Role: "assistant", ToolCalls: []ToolCall{}, FinishReason: "stop"}},
			{"assistant with calls", Message{Role: "assistant", Reasoning: "let me look", FinishReason: "tool_calls", ToolCalls: []ToolCall{
				{ID: "call_1", Type: "function", Function: FunctionCall{Name: "read_file", Arguments: `{"path":"a.go"}`}},
				{ID: "call_2", Type: "function", Function: FunctionCall{Name: "shell", Arguments: `{"cmd":"echo \"hi\" && ls","env":{"A":"ü"}}`}},
				{ID: "call_3", Type: "function", Function: FunctionCall{Name: "broken", Arguments: `{not json`}},
			}}},
			{"tool result", Message{Role: "tool", ToolCallID: "call_1", Name: "read_file", Content: "package a"}},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				in := tt.msg
				in.SessionID, in.TurnID, in.IdemKey = "s", "turn-1", fmt.Sprintf("turn-1/%d", i)
				stored, err := s.AppendMessages(t.Context(), []Message{in})
				if err != nil {
					t.Fatalf("AppendMessages: %v", err)
				}
				got, err := s.Message(t.Context(), stored[0].ID)
				if err != nil {
					t.Fatalf("Message: %v", err)
				}
				if got.CreatedAt.IsZero() || !got.CreatedAt.Equal(stored[0].CreatedAt) {
					t.Errorf("CreatedAt = %v, stored %v", got.CreatedAt, stored[0].CreatedAt)
				}
				want := in
				want.ID, want.CreatedAt = stored[0].ID, got.CreatedAt
				if !reflect.DeepEqual(*got, want) {
					t.Errorf("read back %+v\nwant        %+v", *got, want)
				}
			})
		}
	})
}

func TestMessagesOrderAndSessions(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		for i := range 10 {
			session := []string{"a", "b"}[i%2]
			msg := userMessage(session, fmt.Sprintf("%s/%d", session, i), fmt.Sprint(i))
			if _, err := s.AppendMessages(t.Context(), []Message{msg}); err != nil {
				t.Fatalf("AppendMessages: %v", err)
			}
		}
		tests := []struct {
			session string
			want    []string
		}{
			{"a", []string{"0", "2", "4", "6", "8"}},
			{"b", []string{"1", "3", "5", "7", "9"}},
			{"none", nil},
		}
		for _, tt := range tests {
			msgs, err := s.Messages(t.Context(), tt.session)
			if err != nil {
				t.Fatalf("Messages(%q): %v", tt.session, err)
			}
			var got []string
			for _, m := range msgs {
				got = append(got, m.Content)
				if m.SessionID != tt.session {
					t.Errorf("Messages(%q) returned a message of %q", tt.session, m.SessionID)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Messages(%q) = %q, want %q", tt.session, got, tt.want)
			}
			if !slices.IsSorted(messageIDs(msgs)) {
				t.Errorf("Messages(%q) IDs %v not ascending", tt.session, messageIDs(msgs))
			}
		}
	})
}

func TestMessageByKey(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		stored, err := s.AppendMessages(t.Context(), []Message{userMessage("s", "turn-1/reply-0", "hi")})
		if err != nil {
			t.Fatalf("AppendMessages: %v", err)
		}
		got, err := s.MessageByKey(t.Context(), "turn-1/reply-0")
		if err != nil {
			t.Fatalf("MessageByKey: %v", err)
		}
		if got.ID != stored[0].ID || got.Content != "hi" {
			t.Errorf("MessageByKey = %+v, want %+v", *got, stored[0])
		}
		if _, err := s.MessageByKey(t.Context(), "turn-1/reply-1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("MessageByKey(missing) error = %v, want ErrNotFound", err)
		}
	})
}

func TestFirstMessage(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		if _, err := s.FirstMessage(ctx, "none"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("no messages: %v", err)
		}
		if _, err := s.AppendMessages(ctx, []Message{
			{SessionID: "fm", IdemKey: "fm/0", Role: "user", Content: "hidden first", Hidden: true},
			{SessionID: "fm", IdemKey: "fm/1", Role: "user", Content: "first"},
			{SessionID: "fm", IdemKey: "fm/2", Role: "assistant", Content: "second"},
		}); err != nil {
			t.Fatal(err)
		}
		if m, err := s.FirstMessage(ctx, "fm"); err != nil || m.Content != "first" {
			t.Fatalf("FirstMessage = %+v, %v; want the first visible one", m, err)
		}
	})
}

// Conversation reads what Messages reads, but the keys and creation
// times; it names every other column of Message.
func TestConversation(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		reply := Message{SessionID: "s1", TurnID: "t1", IdemKey: "t1/call/1", Role: "assistant", Content: "a\x00b",
			Reasoning: "think", FinishReason: "tool_calls", PromptTokens: 7, CompletionTokens: 3, Replay: `{"x":1}`,
			ToolCalls: []ToolCall{{ID: "c1", Type: "function", Function: FunctionCall{Name: "todo", Arguments: `{"a":"\u0000"}`}}}}
		steer := userMessage("s1", "t1/steer", "go on")
		steer.Steer = true
		steer.Images = []turnapi.Image{{ID: "img1", MIME: "image/png"}}
		rows := []Message{userMessage("s1", "t1/user", "hi"), reply,
			{SessionID: "s1", TurnID: "t1", IdemKey: "t1/tool/c1", Role: "tool", Content: "done", ToolCallID: "c1", Name: "todo"},
			steer, userMessage("s2", "other", "elsewhere")}
		if _, err := s.AppendMessages(ctx, rows); err != nil {
			t.Fatal(err)
		}
		hidden, err := s.AppendMessages(ctx, []Message{userMessage("s1", "t1/hidden", "discarded")})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.HideMessages(ctx, []int64{hidden[0].ID}); err != nil {
			t.Fatal(err)
		}
		want, err := s.Messages(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Conversation(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != 4 || len(got) != len(want) {
			t.Fatalf("Conversation = %d messages, Messages = %d; want 4", len(got), len(want))
		}
		for i := range want {
			want[i].IdemKey, want[i].CreatedAt = "", time.Time{}
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("message %d:\n got %+v\nwant %+v", i, got[i], want[i])
			}
		}
	})
	// A column added to Message is read by Conversation too, unless it
	// is left out on purpose.
	sch, err := gormschema.Parse(&Message{}, &sync.Map{}, gormschema.NamingStrategy{})
	if err != nil {
		t.Fatal(err)
	}
	var columns []string
	for _, f := range sch.Fields {
		if f.DBName != "" && !slices.Contains([]string{"idem_key", "created_at", "session_id", "hidden"}, f.DBName) {
			columns = append(columns, f.DBName)
		}
	}
	if !slices.Equal(columns, conversationColumns) {
		t.Errorf("Message's columns %v, Conversation reads %v", columns, conversationColumns)
	}
}
