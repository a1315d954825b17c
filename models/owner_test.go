package models

import (
	"errors"
	"slices"
	"testing"
)

// Two chats and the operator, each with a session on the same topic.
const (
	ownerAnn = "telegram:dm:41"
	ownerBob = "telegram:dm:42"
)

// ownedPastSession is pastSession in a session owned by owner ("": the
// operator's).
func ownedPastSession(t *testing.T, s *Store, id, owner, message, summary string) {
	t.Helper()
	if owner != "" {
		if _, err := s.EnsureOwnedSession(t.Context(), id, owner); err != nil {
			t.Fatal(err)
		}
	}
	pastSession(t, s, id, message, summary)
}

// sharedGateway stores past sessions of Ann, Bob and the operator about
// sourdough, and the sessions asking from each.
func sharedGateway(t *testing.T, s *Store) {
	t.Helper()
	for _, p := range []struct{ id, owner string }{
		{"ann-past", ownerAnn}, {"bob-past", ownerBob}, {"op-past", ""},
		{"ann-now", ownerAnn}, {"bob-now", ownerBob}, {"op-now", ""},
	} {
		ownedPastSession(t, s, p.id, p.owner, p.id+" talks about the sourdough starter",
			"Topic: "+p.id+"'s sourdough starter.")
	}
}

func TestSearchesStayWithinTheirScope(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		sharedGateway(t, s)
		words := []string{"sourdough", "starter"}
		for _, c := range []struct {
			name   string
			scope  Scope
			asking string
			want   []string // sorted
		}{
			{"ann's chat", Scope{Owner: ownerAnn}, "ann-now", []string{"ann-past"}},
			{"bob's chat", Scope{Owner: ownerBob}, "bob-now", []string{"bob-past"}},
			{"the operator", Scope{}, "op-now", []string{"ann-now", "ann-past", "bob-now", "bob-past", "op-past"}},
			{"a chat nobody talked in", Scope{Owner: "telegram:dm:43"}, "", nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				hits, err := s.SearchSummaries(ctx, c.scope, words, c.asking, 20)
				if err != nil {
					t.Fatal(err)
				}
				if got := sortedSet(hitSessions(hits)); !slices.Equal(got, c.want) {
					t.Errorf("summaries: %v, want %v", got, c.want)
				}
				passages, err := s.SearchPassages(ctx, c.scope, words, c.asking, 20)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, p := range passages {
					ids = append(ids, p.SessionID)
				}
				if got := sortedSet(ids); !slices.Equal(got, c.want) {
					t.Errorf("passages: %v, want %v", got, c.want)
				}
				vecs, err := s.SummaryVectors(ctx, c.scope, c.asking)
				if err != nil {
					t.Fatal(err)
				}
				ids = nil
				for _, v := range vecs {
					ids = append(ids, v.SessionID)
				}
				if got := sortedSet(ids); !slices.Equal(got, c.want) {
					t.Errorf("vectors: %v, want %v", got, c.want)
				}
				// session_search leaves out no lineage: the asking
				// session is found too.
				groups, err := s.SearchMessages(ctx, c.scope, "sourdough starter", 20, 0)
				if err != nil {
					t.Fatal(err)
				}
				ids = nil
				for _, g := range groups {
					ids = append(ids, g.SessionID)
				}
				want := c.want
				if c.asking != "" {
					want = sortedSet(append(slices.Clone(c.want), c.asking))
				}
				if got := sortedSet(ids); !slices.Equal(got, want) {
					t.Errorf("messages: %v, want %v", got, want)
				}
			})
		}
	})
}

// sortedSet is ids sorted, without repeats.
func sortedSet(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

func TestEnsureOwnedSession(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		sess, err := s.EnsureOwnedSession(ctx, "chat", ownerAnn)
		if err != nil || sess.Owner != ownerAnn || sess.LineageID != "chat" || sess.TurnCount != 0 {
			t.Fatalf("new owned session: %+v %v", sess, err)
		}
		// Turns, and asking again, keep it as it is.
		if _, err := s.NextTurn(ctx, "chat", "m", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EnsureSession(ctx, "chat", "m"); err != nil {
			t.Fatal(err)
		}
		if sess, err := s.EnsureOwnedSession(ctx, "chat", ownerAnn); err != nil || sess.Owner != ownerAnn || sess.TurnCount != 1 {
			t.Fatalf("again: %+v %v", sess, err)
		}
		// Another owner is refused, and changes nothing.
		if _, err := s.EnsureOwnedSession(ctx, "chat", ownerBob); !errors.Is(err, ErrOwned) {
			t.Fatalf("another owner: %v, want ErrOwned", err)
		}
		if sess, _ := s.Session(ctx, "chat"); sess.Owner != ownerAnn {
			t.Fatalf("owner after another's call: %q", sess.Owner)
		}
		if _, err := s.EnsureOwnedSession(ctx, "x", ""); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("no owner: %v, want ErrInvalidArgument", err)
		}
		// An operator's session stays the operator's (EnsureSession).
		if sess, err := s.EnsureSession(ctx, "op", "m"); err != nil || sess.Owner != "" {
			t.Fatalf("operator's session: %+v %v", sess, err)
		}
	})
}

// A chat's session stored before sessions had owners, and its lineage,
// become the chat's when the gateway next hands it a message.
func TestEnsureOwnedSessionClaimsAnUnownedLineage(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		pastSession(t, s, "old", "hello", "")
		pastSession(t, s, "other", "hello", "")
		child, err := s.CompactSession(ctx, "old", "p", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.EnsureOwnedSession(ctx, "old", ownerAnn); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]string{"old": ownerAnn, child.ID: ownerAnn, "other": ""} {
			if sess, err := s.Session(ctx, id); err != nil || sess.Owner != want {
				t.Errorf("owner of %s: %q %v, want %q", id, sess.Owner, err, want)
			}
		}
	})
}

func TestSessionsMadeFromASessionKeepItsOwner(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		ownedPastSession(t, s, "chat", ownerAnn, "hello", "")
		pastSession(t, s, "op", "hello", "")

		child, err := s.CompactSession(ctx, "chat", "p", nil)
		if err != nil || child.Owner != ownerAnn {
			t.Fatalf("compaction's child: %+v %v", child, err)
		}
		grandchild, err := s.CompactSession(ctx, child.ID, "p", nil)
		if err != nil || grandchild.Owner != ownerAnn {
			t.Fatalf("the child's child: %+v %v", grandchild, err)
		}
		fork, err := s.ForkSession(ctx, "chat", "chat-fork")
		if err != nil || fork.Owner != ownerAnn {
			t.Fatalf("fork: %+v %v", fork, err)
		}
		if opChild, err := s.CompactSession(ctx, "op", "p", nil); err != nil || opChild.Owner != "" {
			t.Fatalf("operator's child: %+v %v", opChild, err)
		}

		// A task's session (made by BeginTurn, then linked) takes its
		// parent's owner; one with an owner keeps it.
		for _, c := range []struct{ task, owner, parent, want string }{
			{"task-of-chat", "", "chat", ownerAnn},
			{"task-of-op", "", "op", ""},
			{"task-owned", ownerBob, "chat", ownerBob},
		} {
			if c.owner != "" {
				if _, err := s.EnsureOwnedSession(ctx, c.task, c.owner); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.EnsureSession(ctx, c.task, "m"); err != nil {
				t.Fatal(err)
			}
			if err := s.LinkTask(ctx, c.task, c.parent); err != nil {
				t.Fatal(err)
			}
			sess, err := s.Session(ctx, c.task)
			if err != nil || sess.Owner != c.want || sess.DelegatedFrom != c.parent {
				t.Errorf("%s: %+v %v, want owner %q", c.task, sess, err, c.want)
			}
		}
	})
}

// A database written before sessions had owners gets the column on Open:
// its sessions are the operator's, found by the operator alone.
func TestOwnerAddedToExistingSessions(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, dsn string) {
		ctx := t.Context()
		old, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		pastSession(t, old, "old", "my sourdough starter", "Topic: sourdough.")
		for _, q := range []string{`DROP INDEX idx_sessions_owner`, `ALTER TABLE sessions DROP COLUMN owner`} {
			if err := old.db.Exec(q).Error; err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if err := old.Close(); err != nil {
			t.Fatal(err)
		}
		s := openStore(t, dsn)
		if sess, err := s.Session(ctx, "old"); err != nil || sess.Owner != "" {
			t.Fatalf("old session: %+v %v", sess, err)
		}
		for _, c := range []struct {
			scope Scope
			want  int
		}{{Scope{}, 1}, {Scope{Owner: ownerAnn}, 0}} {
			if hits, err := s.SearchSummaries(ctx, c.scope, []string{"sourdough"}, "", 10); err != nil || len(hits) != c.want {
				t.Errorf("scope %+v: %v %v, want %d hits", c.scope, hitSessions(hits), err, c.want)
			}
		}
	})
}
