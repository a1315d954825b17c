package models

import (
	"errors"
	"fmt"
	"testing"
)

func TestSearchMessages(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		// Four sessions; the phrase is in the oldest one, three sessions back.
		texts := [][]string{
			{"we chose the blue heron codename for the release", "noted", "ship it on friday"},
			{"unrelated chatter about lunch", "sure"},
			{"more unrelated talk", "ok"},
			{"what was the codename again?", "let me look"},
		}
		for i, session := range texts {
			for j, text := range session {
				role := []string{"user", "assistant"}[j%2]
				msg := Message{SessionID: fmt.Sprintf("s%d", i), IdemKey: fmt.Sprintf("s%d/%d", i, j), Role: role, Content: text}
				if _, err := s.AppendMessages(ctx, []Message{msg}); err != nil {
					t.Fatal(err)
				}
			}
		}
		hidden := Message{SessionID: "s9", IdemKey: "s9/1", Role: "assistant", Content: "blue heron in a discarded reply", Hidden: true}
		if _, err := s.AppendMessages(ctx, []Message{hidden}); err != nil {
			t.Fatal(err)
		}
		groups, err := s.SearchMessages(ctx, "Blue Heron", 10, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(groups) != 1 || groups[0].SessionID != "s0" || len(groups[0].Hits) != 1 {
			t.Fatalf("groups = %+v", groups)
		}
		hit := groups[0].Hits[0]
		if len(hit.Before) != 0 || len(hit.After) != 1 || hit.After[0].Content != "noted" {
			t.Fatalf("context = %+v / %+v", hit.Before, hit.After)
		}
		if groups, _ := s.SearchMessages(ctx, `heron" OR "x`, 10, 0); len(groups) != 0 {
			t.Fatalf("query syntax leaked into the search: %+v", groups)
		}
		if _, err := s.SearchMessages(ctx, "  ", 10, 0); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("empty query: %v", err)
		}
	})
}
