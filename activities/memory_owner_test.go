package activities

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakememory"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TestExternalMemoryUserIsTheOwner: an external provider files and
// searches a chat's memories under the chat (the session's owner), and the
// operator's under the default user, so one chat's memories never reach
// another's turn: the turn's sync, the session's end and the prefetch all
// name the owner (Mem0's fake over HTTP, a real SQLite store).
func TestExternalMemoryUserIsTheOwner(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ owner, wantUser string }{
		{"telegram:dm:42", "telegram:dm:42"},
		{"", "user"},
	} {
		ctx := context.Background()
		store, history := editorTurn(t, tt.owner)
		fake := fakememory.NewMem0("k")
		defer fake.Close()
		p := mem0Provider(t, fake.URL())
		a := &Activities{Store: store, Memory: p, RecallBudget: time.Minute}

		a.recallFor(ctx, turnapi.CallModelInput{SessionID: "s", TurnID: "turn/s/1", Call: 1}, history[:1])
		if err := a.SyncMemory(ctx, turnapi.SyncMemoryInput{SessionID: "s", TurnID: "turn/s/1"}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.SummarizeSession(ctx, turnapi.SummarizeSessionInput{SessionID: "s", Text: "Topic: the user's editor, Helix."}); err != nil {
			t.Fatal(err)
		}

		searches := fake.RequestsTo("POST", "/v3/memories/search/")
		var search struct {
			Filters struct {
				UserID string `json:"user_id"`
			} `json:"filters"`
		}
		if len(searches) != 1 || json.Unmarshal(searches[0].Body, &search) != nil || search.Filters.UserID != tt.wantUser {
			t.Fatalf("owner %q: the prefetch searched %d times, as %q; want once, as %q", tt.owner, len(searches), search.Filters.UserID, tt.wantUser)
		}
		adds := fake.RequestsTo("POST", "/v3/memories/add/")
		if len(adds) != 2 { // the turn, then the session's summary
			t.Fatalf("owner %q: %d adds, want the turn's and the summary's", tt.owner, len(adds))
		}
		for _, add := range adds {
			var body struct {
				UserID string `json:"user_id"`
			}
			if json.Unmarshal(add.Body, &body) != nil || body.UserID != tt.wantUser {
				t.Fatalf("owner %q: an add filed under %q, want %q: %s", tt.owner, body.UserID, tt.wantUser, add.Body)
			}
		}
	}
}

// TestSessionKeys: a tool call's environment carries its session's owner
// as the store says, and says when it is not known (a session not
// stored), so a provider's tool refuses rather than act as the operator.
func TestSessionKeys(t *testing.T) {
	t.Parallel()
	store, _ := editorTurn(t, "telegram:dm:42")
	a := &Activities{Store: store}
	for _, tt := range []struct {
		session, lineage, owner string
		known                   bool
	}{
		{"s", "s", "telegram:dm:42", true},
		{"gone", "gone", "", false},
	} {
		lineage, owner, known := a.sessionKeys(t.Context(), tt.session)
		if lineage != tt.lineage || owner != tt.owner || known != tt.known {
			t.Errorf("sessionKeys(%q) = %q, %q, %v; want %q, %q, %v", tt.session, lineage, owner, known, tt.lineage, tt.owner, tt.known)
		}
	}
}
