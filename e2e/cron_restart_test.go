package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// slotPosts counts a webhook's deliveries by the slot they report.
type slotPosts struct {
	mu    sync.Mutex
	count map[time.Time]int
}

func (p *slotPosts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var payload struct {
		ScheduledAt time.Time `json:"scheduled_at"`
	}
	if err := json.Unmarshal(body, &payload); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count[payload.ScheduledAt.UTC()]++
}

func (p *slotPosts) of(slot time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count[slot]
}

// TestCronSlotRunsOnceAcrossAShortRestart: `talaria serve` runs a job due
// every minute (its default catch-up policy, last) and is SIGKILLed two
// seconds before a minute boundary; it is started again two seconds after
// it. The new minute's slot runs once: its scheduler ticks when it starts,
// so the slot is neither recorded missed when the next one comes due nor
// run twice. The runs say so, and the webhook got one delivery of it.
func TestCronSlotRunsOnceAcrossAShortRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a server around a minute boundary")
	}
	t.Parallel()
	model := fakellm.New()
	defer model.Close()
	posts := &slotPosts{count: map[time.Time]int{}}
	hook := httptest.NewServer(posts)
	defer hook.Close()

	u := newUser(t, model.URL())
	port := freePort(t)
	srv := u.serve(port)
	if out, stderr, code := u.run(time.Minute, "cron", "add", "--name", "minutely", "--schedule", "* * * * *",
		"--pre-run", "echo tick", "--deliver", "webhook:"+hook.URL); code != 0 {
		t.Fatalf("cron add: exit %d %s%s", code, out, stderr)
	}

	// The wall clock reaches second 58 of a minute; serve dies there.
	waitFor(t, 2*time.Minute, func() bool {
		s := time.Now()
		return s.Second() == 58 && s.Nanosecond() < 500*int(time.Millisecond)
	})
	srv.kill()
	killedAt := time.Now()
	slot := killedAt.UTC().Truncate(time.Minute).Add(time.Minute)
	if !killedAt.Before(slot) {
		t.Fatalf("serve was killed at %s, not before the minute %s", killedAt.Format(time.StampMilli), slot.Format(time.TimeOnly))
	}

	// Second 2 of the next minute: serve starts again.
	waitFor(t, time.Minute, func() bool { return !time.Now().Before(slot.Add(2 * time.Second)) })
	u.serve(port)
	readyAt := time.Now()

	if !waitDelivered(t, u, posts, slot) {
		t.Fatalf("the slot %s was recorded missed (serve ready again at %s); runs:\n%s",
			slot.Format(time.TimeOnly), readyAt.UTC().Format(time.StampMilli), runsText(u))
	}
	// The slot after it comes and goes: a second run of the slot would have
	// been delivered by then.
	if next := slot.Add(time.Minute); !waitDelivered(t, u, posts, next) {
		t.Fatalf("the slot %s after the restart was recorded missed; runs:\n%s", next.Format(time.TimeOnly), runsText(u))
	}
	if n := posts.of(slot); n != 1 {
		t.Fatalf("the slot %s was delivered %d times, want once", slot.Format(time.TimeOnly), n)
	}
	runs := cronRunsJSON(t, u)
	found := false
	for _, r := range runs {
		if r.Status == "missed" || r.Status == "skipped" {
			t.Errorf("slot %s recorded %s", r.ScheduledAt.Format(time.TimeOnly), r.Status)
		}
		if r.ScheduledAt.Equal(slot) {
			found = true
			if r.Status != "completed" || !strings.Contains(r.Delivery, hook.URL) {
				t.Errorf("the slot's run: %+v", r)
			}
		}
	}
	if !found {
		t.Errorf("no run of the slot %s in:\n%s", slot.Format(time.TimeOnly), runsText(u))
	}
}

// waitDelivered waits until the webhook got slot's delivery (true) or the
// slot is recorded missed (false), looking at the runs once a second.
func waitDelivered(t *testing.T, u *user, posts *slotPosts, slot time.Time) bool {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for next := time.Now(); posts.of(slot) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the slot %s was neither delivered nor recorded missed within 3 minutes; runs:\n%s",
				slot.Format(time.TimeOnly), runsText(u))
		}
		if time.Now().After(next) {
			if missed(t, u, slot) {
				return false
			}
			next = time.Now().Add(time.Second)
		}
	}
	return true
}

// cronRun is a run as `cron runs --json` shows it.
type cronRun struct {
	ScheduledAt time.Time `json:"scheduled_at"`
	Status      string    `json:"status"`
	Delivery    string    `json:"delivery"`
	Error       string    `json:"error"`
}

// cronRunsJSON lists the runs of the job "minutely".
func cronRunsJSON(t *testing.T, u *user) []cronRun {
	t.Helper()
	out, stderr, code := u.run(time.Minute, "cron", "runs", "minutely", "--json")
	if code != 0 {
		t.Fatalf("cron runs: exit %d %s", code, stderr)
	}
	var runs []cronRun
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("cron runs --json: %v\n%s", err, out)
	}
	return runs
}

// missed reports whether the run of slot is recorded missed.
func missed(t *testing.T, u *user, slot time.Time) bool {
	t.Helper()
	for _, r := range cronRunsJSON(t, u) {
		if r.ScheduledAt.Equal(slot) && r.Status == "missed" {
			return true
		}
	}
	return false
}

// runsText is `cron runs minutely`, for a failure message.
func runsText(u *user) string {
	out, _, _ := u.run(time.Minute, "cron", "runs", "minutely")
	return out
}
