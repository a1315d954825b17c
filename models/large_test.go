package models

import (
	"fmt"
	"strings"
	"testing"
)

// TestLargeMessageOfDistinctWords: a 10 MB message of distinct words, more
// than a PostgreSQL text search vector holds, is stored and read back, and
// its first words are found.
func TestLargeMessageOfDistinctWords(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		var b strings.Builder
		for i := 0; b.Len() < 10<<20; i++ {
			fmt.Fprintf(&b, "w%x ", i*7919)
		}
		content := "needle " + b.String()
		if _, err := s.AppendMessages(t.Context(), []Message{userMessage("s", "k", content)}); err != nil {
			t.Fatalf("AppendMessages: %v", err)
		}
		msgs, err := s.Messages(t.Context(), "s")
		if err != nil || len(msgs) != 1 || msgs[0].Content != content {
			t.Fatalf("Messages = %d messages, %v; want the 10 MB message back", len(msgs), err)
		}
		groups, err := s.SearchMessages(t.Context(), Scope{}, "needle", 5, 0)
		if err != nil || len(groups) != 1 {
			t.Errorf("SearchMessages(needle) = %d groups, %v", len(groups), err)
		}
	})
}
