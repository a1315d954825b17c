package memory

import (
	"log/slog"
	"path/filepath"
	"slices"
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/models"
)

// storeOfSharedGateway is a store where two chats of one gateway (Ann's,
// Bob's) and the operator each talked about sourdough, with a summary and
// the same vector each, and where each has a session asking now.
func storeOfSharedGateway(t *testing.T) *models.Store {
	t.Helper()
	ctx := t.Context()
	st, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for _, s := range []struct{ id, owner, msg, summary string }{
		{"ann-past", "telegram:dm:41", "my sourdough starter smells of acetone", "Topic: Ann's sourdough starter."},
		{"bob-past", "telegram:dm:42", "my sourdough starter is flat", "Topic: Bob's sourdough starter."},
		{"op-past", "", "the sourdough starter of the office", "Topic: the office's sourdough starter."},
		{"ann-now", "telegram:dm:41", "hello", ""},
		{"bob-now", "telegram:dm:42", "hello", ""},
		{"op-now", "", "hello", ""},
	} {
		if s.owner != "" {
			if _, err := st.EnsureOwnedSession(ctx, s.id, s.owner); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.NextTurn(ctx, s.id, "m", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := st.AppendMessages(ctx, []models.Message{{SessionID: s.id, IdemKey: s.id + "/1", Role: "user", Content: s.msg}}); err != nil {
			t.Fatal(err)
		}
		if s.summary != "" {
			sum := models.SessionSummary{SessionID: s.id, Summary: s.summary, Turns: 1, Embedding: models.EncodeVector([]float32{1, 0, 0})}
			if err := st.PutSummary(ctx, sum); err != nil {
				t.Fatal(err)
			}
		}
	}
	return st
}

// A chat's session recalls only the chat's past sessions, by text and by
// meaning; the operator's recall every session.
func TestRecallIsScopedByOwner(t *testing.T) {
	t.Parallel()
	st := storeOfSharedGateway(t)
	srv := fakellm.New(fakellm.WithEmbedder(func(string) []float32 { return []float32{1, 0, 0} }))
	t.Cleanup(srv.Close)
	for _, r := range []struct {
		name string
		p    *BuiltinRecall
	}{
		{"by text", NewRecall(st, nil, nil)},
		{"by text and meaning", NewRecall(st, NewEmbedder(config.Endpoint{BaseURL: srv.URL()}, nil, nil), nil)},
	} {
		for _, c := range []struct {
			asking string
			want   []string
		}{
			{"ann-now", []string{"ann-past"}},
			{"bob-now", []string{"bob-past"}},
			{"op-now", []string{"ann-past", "bob-past", "op-past"}},
			{"", []string{"ann-past", "bob-past", "op-past"}}, // the CLI's, the API's
		} {
			got, err := r.p.Prefetch(t.Context(), Query{SessionID: c.asking, Text: "How is my sourdough starter?", Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			ids := itemIDs(got)
			slices.Sort(ids)
			if !slices.Equal(ids, c.want) {
				t.Errorf("%s, asked from %q: recalled %v, want %v", r.name, c.asking, ids, c.want)
			}
		}
	}
}

// A session that is not stored has no known owner: it recalls nothing.
func TestRecallFromAnUnknownSessionRecallsNothing(t *testing.T) {
	t.Parallel()
	st := storeOfSharedGateway(t)
	got, err := NewRecall(st, nil, slog.New(slog.DiscardHandler)).Prefetch(t.Context(), Query{SessionID: "nobody", Text: "sourdough starter"})
	if err != nil || len(got.Items) != 0 {
		t.Fatalf("recalled %v, %v; want nothing", itemIDs(got), err)
	}
}
