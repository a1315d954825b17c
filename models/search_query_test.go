package models

import (
	"fmt"
	"testing"
)

func TestSearchTerms(t *testing.T) {
	tests := []struct {
		query string
		want  []string
	}{
		{"finished plan", []string{"finished", "plan"}},
		{`"finished plan"`, []string{"finished plan"}},
		{`deploy "finished   plan" friday`, []string{"deploy", "finished plan", "friday"}},
		{`  spaced   out  `, []string{"spaced", "out"}},
		{`open "quote runs on`, []string{"open", "quote runs on"}},
		{`heron" OR "x`, []string{"heron", "OR", "x"}},
		{`- "" " " ... kite`, []string{"kite"}},
		{`über-größe 42`, []string{"über-größe", "42"}},
		{``, nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			if got := searchTerms(tt.query); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Fatalf("searchTerms(%q) = %q, want %q", tt.query, got, tt.want)
			}
		})
	}
}

func TestFTS5Query(t *testing.T) {
	tests := []struct {
		terms []string
		want  string
	}{
		{[]string{"finished", "plan"}, `"finished" AND "plan"`},
		{[]string{"finished plan"}, `"finished plan"`},
		{[]string{`a"b`, "NEAR"}, `"a""b" AND "NEAR"`},
	}
	for _, tt := range tests {
		if got := fts5Query(tt.terms); got != tt.want {
			t.Errorf("fts5Query(%q) = %s, want %s", tt.terms, got, tt.want)
		}
	}
}

// TestSearchMessagesWords: the words of a query may be apart and in any
// order; a quoted phrase must appear as written.
func TestSearchMessagesWords(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		texts := []string{
			"I finished the migration plan yesterday", // both words, apart
			"the plan is finished",                    // both, reversed
			"here is the finished plan",               // the phrase
			"finished the laundry",                    // one word only
		}
		// A memory review's copy of a conversation is not a conversation.
		review := Message{SessionID: ReviewSessionPrefix + "w0.10", IdemKey: "review/0", Role: "user", Content: texts[0]}
		if _, err := s.AppendMessages(ctx, []Message{review}); err != nil {
			t.Fatal(err)
		}
		for i, text := range texts {
			msg := Message{SessionID: fmt.Sprintf("w%d", i), IdemKey: fmt.Sprintf("w%d/0", i), Role: "user", Content: text}
			if _, err := s.AppendMessages(ctx, []Message{msg}); err != nil {
				t.Fatal(err)
			}
		}
		tests := []struct {
			query string
			want  []string // sessions, newest first
		}{
			{"finished plan", []string{"w2", "w1", "w0"}},
			{"PLAN finished", []string{"w2", "w1", "w0"}},
			{`"finished plan"`, []string{"w2"}},
			{`"plan is finished" the`, []string{"w1"}},
			{"finished laundry plan", nil},
			{`"finished" OR "nothing"`, nil},
			{"... --", nil},
		}
		for _, tt := range tests {
			t.Run(tt.query, func(t *testing.T) {
				groups, err := s.SearchMessages(ctx, Scope{}, tt.query, 10, 0)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, g := range groups {
					got = append(got, g.SessionID)
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Fatalf("SearchMessages(%q) found %v, want %v", tt.query, got, tt.want)
				}
			})
		}
	})
}
