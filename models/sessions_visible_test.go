package models

import (
	"fmt"
	"testing"
)

// TestVisibleSessions: memory-review sessions are left out of
// VisibleSessions (and its limit counts only the others), kept in Sessions.
func TestVisibleSessions(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		// Oldest first: the review sessions are the most recent.
		for _, id := range []string{"alpha", "Review.upper", "cron.job1.1700000000", "beta", "review.beta.1", "review.alpha.2"} {
			if _, err := s.NextTurn(ctx, id, "m", ""); err != nil {
				t.Fatal(err)
			}
		}
		ids := func(sessions []Session, err error) string {
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, x := range sessions {
				out = append(out, x.ID)
			}
			return fmt.Sprint(out)
		}
		if got, want := ids(s.VisibleSessions(ctx, 0)), "[beta cron.job1.1700000000 Review.upper alpha]"; got != want {
			t.Errorf("VisibleSessions = %s, want %s", got, want)
		}
		if got, want := ids(s.VisibleSessions(ctx, 1)), "[beta]"; got != want {
			t.Errorf("VisibleSessions(1) = %s, want %s", got, want)
		}
		if got := ids(s.Sessions(ctx, 0)); got != "[review.alpha.2 review.beta.1 beta cron.job1.1700000000 Review.upper alpha]" {
			t.Errorf("Sessions = %s", got)
		}
	})
}

func TestIsBackgroundSession(t *testing.T) {
	for id, want := range map[string]bool{"review.s1.3": true, "review.": true, "s1": false, "reviews": false, "Review.x": false, "cron.j.1": false} {
		if got := IsBackgroundSession(id); got != want {
			t.Errorf("IsBackgroundSession(%q) = %v, want %v", id, got, want)
		}
	}
}
