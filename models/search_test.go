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
		groups, err := s.SearchMessages(ctx, Scope{}, "Blue Heron", 10, 1)
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
		if groups, _ := s.SearchMessages(ctx, Scope{}, `heron" OR "x`, 10, 0); len(groups) != 0 {
			t.Fatalf("query syntax leaked into the search: %+v", groups)
		}
		if _, err := s.SearchMessages(ctx, Scope{}, "  ", 10, 0); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("empty query: %v", err)
		}
	})
}

// TestSearchMessagesByLineage: hits are grouped by lineage, and a message
// copied into a child session is found once, in the child.
func TestSearchMessagesByLineage(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		// root: "orange kite" in the head and "done" in the tail (both
		// copied), "silver comet" in the summarised middle.
		parent := lineageParent(t, s, "root")
		child, err := s.CompactSession(ctx, "root", "p", compaction(parent, "summary of the middle"))
		if err != nil {
			t.Fatal(err)
		}
		later := []Message{
			userMessage(child.ID, "child/1", "is the orange kite still on?"),
			userMessage("other", "other/1", "an unrelated orange kite"),
		}
		if _, err := s.AppendMessages(ctx, later); err != nil {
			t.Fatal(err)
		}

		type hit struct{ session, content string }
		type group struct {
			lineage, session string
			sessions         []string
			hits             []hit
		}
		tests := []struct {
			phrase string
			limit  int
			want   []group
		}{
			{"orange kite", 10, []group{
				{"other", "other", []string{"other"}, []hit{{"other", "an unrelated orange kite"}}},
				{"root", child.ID, []string{child.ID}, []hit{
					{child.ID, "is the orange kite still on?"},
					{child.ID, "we picked the orange kite codename"},
				}},
			}},
			{"orange kite", 2, []group{
				{"other", "other", []string{"other"}, []hit{{"other", "an unrelated orange kite"}}},
				{"root", child.ID, []string{child.ID}, []hit{{child.ID, "is the orange kite still on?"}}},
			}},
			{"silver comet", 10, []group{
				{"root", "root", []string{"root"}, []hit{{"root", "the silver comet file"}}},
			}},
			{"summary of the middle", 10, []group{
				{"root", child.ID, []string{child.ID}, []hit{{child.ID, "summary of the middle"}}},
			}},
			{"done", 10, []group{
				{"root", child.ID, []string{child.ID}, []hit{{child.ID, "done"}}},
			}},
		}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/%d", tt.phrase, tt.limit), func(t *testing.T) {
				groups, err := s.SearchMessages(ctx, Scope{}, tt.phrase, tt.limit, 1)
				if err != nil {
					t.Fatal(err)
				}
				var got []group
				for _, g := range groups {
					gg := group{g.LineageID, g.SessionID, g.SessionIDs, nil}
					for _, h := range g.Hits {
						gg.hits = append(gg.hits, hit{h.Message.SessionID, h.Message.Content})
						for _, n := range append(h.Before, h.After...) {
							if n.SessionID != h.Message.SessionID {
								t.Errorf("neighbour %+v of a hit in %s", n, h.Message.SessionID)
							}
						}
					}
					got = append(got, gg)
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Fatalf("groups = %+v\nwant     %+v", got, tt.want)
				}
			})
		}

		// The copied head's neighbours are the child's: the summary follows it.
		groups, err := s.SearchMessages(ctx, Scope{}, "picked the orange kite", 10, 1)
		if err != nil || len(groups) != 1 || len(groups[0].Hits) != 1 {
			t.Fatalf("groups = %+v, %v", groups, err)
		}
		if after := groups[0].Hits[0].After; len(after) != 1 || after[0].Content != "summary of the middle" {
			t.Fatalf("after = %+v", after)
		}
	})
}
