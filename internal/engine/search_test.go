package engine

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/models"
)

// session_search called from a chat's session finds only the chat's
// sessions; from the operator's, every session.
func TestSessionSearchIsScopedByOwner(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for _, s := range []struct{ id, owner string }{
		{"ann-past", "telegram:dm:41"}, {"bob-past", "telegram:dm:42"}, {"op-past", ""},
		{"ann-now", "telegram:dm:41"}, {"op-now", ""},
	} {
		if s.owner != "" {
			if _, err := st.EnsureOwnedSession(ctx, s.id, s.owner); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.EnsureSession(ctx, s.id, "m"); err != nil {
			t.Fatal(err)
		}
		msg := models.Message{SessionID: s.id, IdemKey: s.id + "/1", Role: "user", Content: s.id + ": the codename is blue heron"}
		if _, err := st.AppendMessages(ctx, []models.Message{msg}); err != nil {
			t.Fatal(err)
		}
	}
	search := tools.SessionSearch(storeSearcher{st})
	for _, c := range []struct {
		asking string
		want   []string
	}{
		{"ann-now", []string{"ann-now", "ann-past"}},
		{"op-now", []string{"ann-now", "ann-past", "bob-past", "op-now", "op-past"}},
	} {
		out, err := search.Run(ctx, tools.Env{SessionID: c.asking}, json.RawMessage(`{"query":"blue heron"}`))
		if err != nil {
			t.Fatal(err)
		}
		var res struct{ Sessions []tools.SearchSession }
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		var got []string
		for _, s := range res.Sessions {
			got = append(got, s.SessionID)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("from %s: found %v, want %v", c.asking, got, c.want)
		}
	}
	// A session that is not stored has no known owner: no search.
	if out, err := search.Run(ctx, tools.Env{SessionID: "nobody"}, json.RawMessage(`{"query":"blue heron"}`)); err == nil {
		t.Fatalf("searched from a session not stored: %s", out)
	}
}
