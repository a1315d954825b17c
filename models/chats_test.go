package models

import (
	"testing"
	"time"
)

func TestChats(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		if _, ok, err := s.ChatState(ctx, "telegram:dm:42"); ok || err != nil {
			t.Fatalf("a chat before any: %v %v", ok, err)
		}
		at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		c := Chat{Key: "telegram:dm:42", SessionID: "telegram.dm.42", LastActive: at}
		if err := s.SaveChat(ctx, c); err != nil {
			t.Fatal(err)
		}
		c.Generation, c.Previous, c.SessionID, c.Model = 1, c.SessionID, "telegram.dm.42-g1", "m2"
		if err := s.SaveChat(ctx, c); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.ChatState(ctx, "telegram:dm:42")
		if !ok || err != nil || got.SessionID != "telegram.dm.42-g1" || got.Previous != "telegram.dm.42" || got.Model != "m2" || !got.LastActive.Equal(at) {
			t.Fatalf("chat = %+v %v %v", got, ok, err)
		}
		if target, ok, err := s.ChatTargetOfSession(ctx, "telegram.dm.42-g1"); !ok || err != nil || target != "telegram:42" {
			t.Fatalf("chat of the current session = %q %v %v", target, ok, err)
		}
		for _, id := range []string{"telegram.dm.42", "other", ""} {
			if target, ok, err := s.ChatTargetOfSession(ctx, id); ok || err != nil {
				t.Fatalf("chat of session %q = %q %v %v, want none", id, target, ok, err)
			}
		}
		if h, err := s.Home(ctx); h != "" || err != nil {
			t.Fatalf("home before any: %q %v", h, err)
		}
		for _, target := range []string{"telegram:42", "slack:C1"} {
			if err := s.SetHome(ctx, target); err != nil {
				t.Fatal(err)
			}
			if h, err := s.Home(ctx); h != target || err != nil {
				t.Fatalf("home = %q %v, want %q", h, err, target)
			}
		}
	})
}

// TestChatTargetOfSession: a chat's delivery target is the one stored with
// it, a thread in its id kept; a chat stored without one has its key's.
func TestChatTargetOfSession(t *testing.T) {
	t.Parallel()
	s := openStore(t, t.TempDir()+"/talaria.db")
	ctx := t.Context()
	for _, c := range []Chat{
		{Key: "email:dm:alice@example.com:<t1@example.com>", SessionID: "e1", Target: "email:alice@example.com:<t1@example.com>"},
		{Key: "telegram:dm:42", SessionID: "t1"},
	} {
		if err := s.SaveChat(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]string{"e1": "email:alice@example.com:<t1@example.com>", "t1": "telegram:42"} {
		if got, ok, err := s.ChatTargetOfSession(ctx, id); !ok || err != nil || got != want {
			t.Errorf("target of %s = %q %v %v, want %q", id, got, ok, err, want)
		}
	}
	if _, ok, err := s.ChatTargetOfSession(ctx, "none"); ok || err != nil {
		t.Errorf("a session of no chat: %v %v", ok, err)
	}
}

func TestKeyTarget(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"telegram:dm:42": "telegram:42", "telegram:group:-1001:7:42": "telegram:-1001",
		"slack:dm:D1": "slack:D1", "telegram": "", "": "",
	} {
		if got := KeyTarget(key); got != want {
			t.Errorf("KeyTarget(%q) = %q, want %q", key, got, want)
		}
	}
}
