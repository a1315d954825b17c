package models

import (
	"errors"
	"slices"
	"testing"
)

func TestHiddenMessages(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		msgs := []Message{
			userMessage("h", "h/1", "visible 1"),
			{SessionID: "h", IdemKey: "h/2", Role: "assistant", Content: "discarded", Hidden: true},
			userMessage("h", "h/3", "visible 2"),
		}
		stored, err := s.AppendMessages(t.Context(), msgs)
		if err != nil {
			t.Fatal(err)
		}
		contents := func(ms []Message) []string {
			var out []string
			for _, m := range ms {
				out = append(out, m.Content)
			}
			return out
		}
		conv, err := s.Messages(t.Context(), "h")
		if err != nil || !slices.Equal(contents(conv), []string{"visible 1", "visible 2"}) {
			t.Fatalf("Messages = %q, %v", contents(conv), err)
		}
		all, err := s.AllMessages(t.Context(), "h")
		if err != nil || !slices.Equal(contents(all), []string{"visible 1", "discarded", "visible 2"}) {
			t.Fatalf("AllMessages = %q, %v", contents(all), err)
		}
		if err := s.RevealMessage(t.Context(), stored[1].ID); err != nil {
			t.Fatal(err)
		}
		if err := s.RevealMessage(t.Context(), stored[1].ID); err != nil {
			t.Fatalf("revealing twice: %v", err)
		}
		conv, _ = s.Messages(t.Context(), "h")
		if !slices.Equal(contents(conv), []string{"visible 1", "discarded", "visible 2"}) {
			t.Fatalf("after reveal Messages = %q", contents(conv))
		}
		if err := s.RevealMessage(t.Context(), 1<<40); !errors.Is(err, ErrNotFound) {
			t.Fatalf("reveal missing = %v", err)
		}
	})
}
