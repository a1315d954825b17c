package models

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
)

// hostileTexts are contents a turn may carry: NUL bytes from a model's
// "\u0000", invalid UTF-8 from a file or a command, surrogate halves as
// bytes, and text that already looks like the store's escape.
var hostileTexts = []struct{ name, text string }{
	{"empty", ""},
	{"plain", "hello, world"},
	{"unicode", "héllo 世界 🚀 \uFFFD"},
	{"NUL", "a\x00b"},
	{"only NUL", "\x00\x00"},
	{"invalid UTF-8", "caf\xe9 \xff\xfe"},
	{"truncated rune", "abc\xe4\xb8"},
	{"lone surrogate bytes", "x\xed\xa0\x80y\xed\xbf\xbf"},
	{"escape rune", "a\uFDD0b"},
	{"looks like NUL escape", "\uFDD00\uFDD0"},
	{"looks like byte escape", "\uFDD0xff\uFDD0 and \uFDD0e\uFDD0"},
	{"mixed", "\x00\uFDD0x00\uFDD0\xff\uFDD0"},
}

func TestEncodeTextRoundTrip(t *testing.T) {
	for _, tt := range hostileTexts {
		t.Run(tt.name, func(t *testing.T) {
			enc := EncodeText(tt.text)
			if !utf8.ValidString(enc) || strings.IndexByte(enc, 0) >= 0 {
				t.Errorf("EncodeText(%q) = %q: not storable text", tt.text, enc)
			}
			if got := DecodeText(enc); got != tt.text {
				t.Errorf("DecodeText(EncodeText(%q)) = %q", tt.text, got)
			}
		})
	}
}

func TestEncodeTextKeepsOrdinaryText(t *testing.T) {
	for _, s := range []string{"", "plain", "héllo 世界 🚀", "tab\tnewline\n", "\uFFFD", "\uFDD1"} {
		if got := EncodeText(s); got != s {
			t.Errorf("EncodeText(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestDecodeTextLeavesNonEscapes(t *testing.T) {
	// Text stored before the escape existed: a U+FDD0 that starts no
	// escape stays as it is.
	for _, s := range []string{"\uFDD0", "a\uFDD0z", "\uFDD0x", "\uFDD00", "\uFDD0xF0\uFDD0", "\uFDD0xg1\uFDD0", "\uFDD0x41"} {
		if got := DecodeText(s); got != s {
			t.Errorf("DecodeText(%q) = %q, want it unchanged", s, got)
		}
	}
}

func FuzzEncodeText(f *testing.F) {
	for _, tt := range hostileTexts {
		f.Add(tt.text)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := EncodeText(s)
		if !utf8.ValidString(enc) || strings.IndexByte(enc, 0) >= 0 {
			t.Fatalf("EncodeText(%q) = %q: not storable text", s, enc)
		}
		if got := DecodeText(enc); got != s {
			t.Fatalf("DecodeText(EncodeText(%q)) = %q", s, got)
		}
	})
}

// TestLosslessTextColumns stores every hostile text in each kind of text
// column and reads it back byte for byte, on both databases.
func TestLosslessTextColumns(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		for i, tt := range hostileTexts {
			t.Run(tt.name, func(t *testing.T) {
				text := tt.text
				sid := "s" + string(rune('a'+i))
				if _, err := s.NextTurn(ctx, sid, "model "+text, "res "+text); err != nil {
					t.Fatalf("NextTurn: %v", err)
				}
				if err := s.SetSessionTitle(ctx, sid, text); err != nil {
					t.Fatalf("SetSessionTitle: %v", err)
				}
				if got, err := s.SetSystemPromptOnce(ctx, sid, "prompt "+text); err != nil || got != "prompt "+text {
					t.Fatalf("SetSystemPromptOnce = %q, %v", got, err)
				}
				sess, err := s.Session(ctx, sid)
				if err != nil {
					t.Fatal(err)
				}
				if sess.Title != text || sess.Model != "model "+text || sess.SystemPrompt != "prompt "+text {
					t.Errorf("session = %q / %q / %q", sess.Title, sess.Model, sess.SystemPrompt)
				}

				call := ToolCall{ID: "call " + text, Type: "function", Function: FunctionCall{Name: "name " + text, Arguments: `{"a":"` + text + `"}`}}
				in := []Message{
					{SessionID: sid, TurnID: sid + "/1", IdemKey: sid + "/a " + text, Role: "assistant", Content: text,
						Reasoning: "thinking " + text, FinishReason: "stop " + text, ToolCalls: []ToolCall{call}},
					{SessionID: sid, TurnID: sid + "/1", IdemKey: sid + "/t " + text, Role: "tool", Content: "result " + text,
						ToolCallID: call.ID, Name: call.Function.Name},
				}
				stored, err := s.AppendMessages(ctx, in)
				if err != nil {
					t.Fatalf("AppendMessages: %v", err)
				}
				again, err := s.AppendMessages(ctx, in)
				if err != nil || again[0].ID != stored[0].ID || again[1].ID != stored[1].ID {
					t.Fatalf("retried AppendMessages = %v, %v; want the stored rows", messageIDs(again), err)
				}
				msgs, err := s.Messages(ctx, sid)
				if err != nil || len(msgs) != 2 {
					t.Fatalf("Messages = %d, %v", len(msgs), err)
				}
				for j, m := range msgs {
					w := in[j]
					if m.IdemKey != w.IdemKey || m.Content != w.Content || m.Reasoning != w.Reasoning ||
						m.FinishReason != w.FinishReason || m.ToolCallID != w.ToolCallID || m.Name != w.Name {
						t.Errorf("message %d = %+v, want %+v", j, m, w)
					}
				}
				if len(msgs[0].ToolCalls) != 1 || msgs[0].ToolCalls[0] != call {
					t.Errorf("tool calls = %+v, want %+v", msgs[0].ToolCalls, call)
				}
				if m, err := s.MessageByKey(ctx, in[1].IdemKey); err != nil || m.ID != stored[1].ID {
					t.Errorf("MessageByKey = %v, %v", m, err)
				}

				end := time.Now().UTC()
				turn := Turn{ID: sid + "/1", SessionID: sid, Number: 1, Status: "completed", ExitReason: "text_response",
					Error: "error " + text, FinalResponse: text, Model: "m " + text, StartedAt: end, EndedAt: &end}
				if err := s.UpsertTurn(ctx, turn); err != nil {
					t.Fatalf("UpsertTurn: %v", err)
				}
				if got, err := s.Turn(ctx, turn.ID); err != nil || got.FinalResponse != text || got.Error != turn.Error || got.Model != turn.Model {
					t.Errorf("Turn = %+v, %v", got, err)
				}

				if err := s.AppendEvents(ctx, []Event{{TurnID: turn.ID, Kind: "delta", Data: text}}); err != nil {
					t.Fatalf("AppendEvents: %v", err)
				}
				if evs, err := s.EventsAfter(ctx, turn.ID, 0, 0); err != nil || len(evs) != 1 || evs[0].Data != text {
					t.Errorf("EventsAfter = %+v, %v", evs, err)
				}

				key := sid + "/claim " + text
				if earlier, err := s.ClaimTool(ctx, key); err != nil || earlier {
					t.Fatalf("ClaimTool = %v, %v", earlier, err)
				}
				if earlier, err := s.ClaimTool(ctx, key); err != nil || !earlier {
					t.Errorf("second ClaimTool = %v, %v; want earlier", earlier, err)
				}

				if err := s.AddGrant(ctx, sid, "cmd:"+text); err != nil {
					t.Fatalf("AddGrant: %v", err)
				}
				if got, _, err := s.Grants(ctx, sid); err != nil || len(got) != 1 || got[0] != "cmd:"+text {
					t.Errorf("Grants = %q, %v", got, err)
				}
			})
		}
	})
}

// TestSearchFindsWordsNextToEscapes: a message holding a NUL byte or
// invalid UTF-8 is still found by its ordinary words.
func TestSearchFindsWordsNextToEscapes(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		content := "the zebra\x00crossing is caf\xe9 and quokka"
		if _, err := s.AppendMessages(t.Context(), []Message{userMessage("s", "k", content)}); err != nil {
			t.Fatal(err)
		}
		for _, word := range []string{"zebra", "quokka"} {
			groups, err := s.SearchMessages(t.Context(), Scope{}, word, 5, 0)
			if err != nil {
				t.Fatalf("SearchMessages(%q): %v", word, err)
			}
			if len(groups) != 1 || groups[0].Hits[0].Message.Content != content {
				t.Errorf("SearchMessages(%q) = %+v, want the message, byte for byte", word, groups)
			}
		}
		if _, err := s.SearchMessages(t.Context(), Scope{}, "a\x00b", 5, 0); err != nil {
			t.Errorf("SearchMessages with a NUL byte: %v", err)
		}
	})
}

func TestCheckIDRefusesUnstorableIDs(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		for _, id := range []string{"a\x00b", "caf\xe9"} {
			if _, err := s.NextTurn(t.Context(), id, "m", ""); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("NextTurn(%q) = %v, want ErrInvalidArgument", id, err)
			}
		}
	})
}

func TestIsRejection(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "22021"}, true}, // invalid byte sequence
		{&pgconn.PgError{Code: "22001"}, true}, // value too long
		{&pgconn.PgError{Code: "54000"}, true}, // program limit exceeded
		{&pgconn.PgError{Code: "08006"}, false},
		{&pgconn.PgError{Code: "57P01"}, false}, // admin shutdown
		{&pgconn.PgError{Code: "23505"}, false},
		{errors.New("connection refused"), false},
	}
	for _, tt := range tests {
		if got := isRejection(tt.err); got != tt.want {
			t.Errorf("isRejection(%v) = %v, want %v", tt.err, got, tt.want)
		}
		if got := errors.Is(markRejection(tt.err), ErrRejected); got != tt.want {
			t.Errorf("markRejection(%v) is ErrRejected: %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestRejectedWriteIsErrRejected: content the database refuses is
// reported as ErrRejected through the Store's ordinary error wrapping.
func TestRejectedWriteIsErrRejected(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		s := openStore(t, postgresTestDSN(t))
		err := s.AddGrant(t.Context(), "s", "cmd:"+strings.Repeat("x", 400)) // rule is varchar(320)
		if !errors.Is(err, ErrRejected) {
			t.Errorf("AddGrant with an oversized rule = %v, want ErrRejected", err)
		}
		err = s.db.WithContext(t.Context()).Exec("INSERT INTO todos (session_id, data) VALUES (?, ?)", "s", "a\x00b").Error
		if !errors.Is(err, ErrRejected) {
			t.Errorf("raw insert of a NUL byte = %v, want ErrRejected", err)
		}
		if err := s.AddGrant(t.Context(), "s", "cmd:ok"); err != nil {
			t.Errorf("AddGrant after a rejection: %v", err)
		}
	})
	t.Run("sqlite", func(t *testing.T) {
		s := openStore(t, t.TempDir()+"/talaria.db")
		var n int64
		err := s.db.WithContext(t.Context()).Raw("SELECT length(zeroblob(2000000000))").Scan(&n).Error
		if !errors.Is(err, ErrRejected) {
			t.Errorf("a value over SQLite's length limit = %v, want ErrRejected", err)
		}
	})
}

// TestLosslessCronText: a cron job's prompt and a run's error keep their
// bytes through create, update and read, on both databases.
func TestLosslessCronText(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openCronStore(t, dsn)
		ctx := t.Context()
		job := cronJob("j1")
		job.Prompt = "r\xe9sum\xe9\x00 of the day"
		if _, err := s.CreateCronJob(ctx, job); err != nil {
			t.Fatalf("CreateCronJob: %v", err)
		}
		job.Prompt = "updated \xff\x00\uFDD0"
		job.PreRunScript = "echo \xfe"
		if err := s.UpdateCronJob(ctx, job); err != nil {
			t.Fatalf("UpdateCronJob: %v", err)
		}
		got, err := s.CronJob(ctx, "j1")
		if err != nil || got.Prompt != job.Prompt || got.PreRunScript != job.PreRunScript {
			t.Fatalf("CronJob = %+v, %v; want prompt %q", got, err, job.Prompt)
		}
		slot := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
		run := CronRun{JobID: "j1", ScheduledAt: slot, Status: RunStarted}
		if _, err := s.RecordRun(ctx, run); err != nil {
			t.Fatalf("RecordRun: %v", err)
		}
		run.Status, run.Error, run.Delivery = RunFailed, "boom \x00\xff", "local: caf\xe9"
		if err := s.UpdateRun(ctx, run); err != nil {
			t.Fatalf("UpdateRun: %v", err)
		}
		r, err := s.CronRun(ctx, "j1", slot)
		if err != nil || r.Error != run.Error || r.Delivery != run.Delivery {
			t.Errorf("CronRun = %+v, %v", r, err)
		}
	})
}

// TestSearchIndexUpgrade: a SQLite database whose full-text index was made
// before escapes existed gets the new index, rebuilt from its messages.
func TestSearchIndexUpgrade(t *testing.T) {
	path := t.TempDir() + "/talaria.db"
	s := openStore(t, path)
	if _, err := s.AppendMessages(t.Context(), []Message{userMessage("s", "k1", "an old platypus")}); err != nil {
		t.Fatal(err)
	}
	db := s.db.WithContext(t.Context())
	for _, q := range []string{
		`DROP TABLE messages_fts`,
		`CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id')`,
		`INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')`,
	} {
		if err := db.Exec(q).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path)
	var def string
	if err := s.db.Raw(`SELECT sql FROM sqlite_master WHERE name = 'messages_fts'`).Scan(&def).Error; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def, "separators") {
		t.Errorf("index not upgraded: %s", def)
	}
	if _, err := s.AppendMessages(t.Context(), []Message{userMessage("s", "k2", "a new\x00wombat")}); err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"platypus", "wombat"} {
		if groups, err := s.SearchMessages(t.Context(), Scope{}, word, 5, 0); err != nil || len(groups) != 1 {
			t.Errorf("SearchMessages(%q) = %v, %v; want one hit", word, groups, err)
		}
	}
}
