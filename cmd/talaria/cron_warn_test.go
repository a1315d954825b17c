package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/models"
)

// TestCronAddWarnsWithoutScheduler: `cron add` says in one line that
// nothing will run the job while no scheduler beats on the store, and says
// nothing once one does (recently enough).
func TestCronAddWarnsWithoutScheduler(t *testing.T) {
	home := t.TempDir()
	dsn := filepath.Join(t.TempDir(), "talaria.db")
	beat := func(at time.Time) {
		t.Helper()
		st, err := models.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.RecordSchedulerBeat(t.Context(), "host/1", at); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		beat time.Duration // ago; 0: none recorded before this step
		warn bool
	}{
		{"a", 0, true},
		{"b", 10 * time.Second, false},
	}
	for _, tt := range tests {
		if tt.beat > 0 {
			beat(time.Now().Add(-tt.beat))
		}
		out, err := cronAt(t, home, dsn, "add", "--name", tt.name, "--schedule", "@daily", "--prompt", "p")
		if err != nil {
			t.Fatalf("cron add: %v\n%s", err, out)
		}
		if got := strings.Contains(out, noSchedulerWarning+"\n"); got != tt.warn {
			t.Errorf("job %s (beat %s ago): warned %v, want %v\n%s", tt.name, tt.beat, got, tt.warn, out)
		}
		if strings.Count(out, "warning") > 1 {
			t.Errorf("more than one warning:\n%s", out)
		}
	}
	if strings.Contains(noSchedulerWarning, "\n") || strings.Contains(noWorkerWarning, "\n") {
		t.Fatal("a warning spans lines")
	}
	// A beat older than engine.SchedulerBeatFresh does not count.
	dsn = filepath.Join(t.TempDir(), "old.db")
	beat(time.Now().Add(-engine.SchedulerBeatFresh - time.Minute))
	if out, _ := cronAt(t, home, dsn, "add", "--name", "late", "--schedule", "@daily", "--prompt", "p"); !strings.Contains(out, noSchedulerWarning) {
		t.Errorf("a stale scheduler counted as running:\n%s", out)
	}
}
