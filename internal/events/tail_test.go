package events

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/talaria-agent/talaria/models"
)

// collect reads ch until it closes or the test's patience ends.
func collect(t *testing.T, ch <-chan models.Event) []models.Event {
	t.Helper()
	var out []models.Event
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("tail did not end; got %d events", len(out))
		}
	}
}

func deltaText(evs []models.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Kind == KindDelta {
			b.WriteString(ev.Data)
		}
	}
	return b.String()
}

func TestTailFollowsAnotherStore(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		worker, client := openStore(t, dsn), openStore(t, dsn)
		tail := Tail(t.Context(), client, "turn/x/1", 0, 5*time.Millisecond)

		p := NewPublisher(worker, "turn/x/1", WithFlushEvery(5*time.Millisecond))
		other := NewPublisher(worker, "turn/x/2", WithFlushEvery(5*time.Millisecond))
		var want strings.Builder
		for i := range 200 {
			want.WriteString(fmt.Sprint(i, " "))
			p.Publish(KindDelta, fmt.Sprint(i, " "))
			other.Publish(KindDelta, "other turn")
			if i == 100 {
				p.Publish(KindToolStart, `{"name":"terminal"}`)
				time.Sleep(20 * time.Millisecond)
				p.Publish(KindToolEnd, `{"name":"terminal"}`)
			}
		}
		p.Publish(KindDone, "")
		for _, pub := range []*Publisher{p, other} {
			if err := pub.Close(t.Context()); err != nil {
				t.Fatalf("Close: %v", err)
			}
		}
		// Events after "done" are not delivered.
		if err := worker.AppendEvents(t.Context(), []models.Event{{TurnID: "turn/x/1", Kind: KindStatus, Data: "late"}}); err != nil {
			t.Fatalf("AppendEvents: %v", err)
		}

		got := collect(t, tail)
		if text := deltaText(got); text != want.String() {
			t.Errorf("text = %q, want %q", text, want.String())
		}
		var kinds []string
		for i, ev := range got {
			if ev.TurnID != "turn/x/1" {
				t.Fatalf("event of turn %q delivered", ev.TurnID)
			}
			if i > 0 && ev.ID <= got[i-1].ID {
				t.Fatalf("IDs out of order: %d after %d", ev.ID, got[i-1].ID)
			}
			if ev.Kind != KindDelta {
				kinds = append(kinds, ev.Kind)
			}
		}
		if want := []string{KindToolStart, KindToolEnd, KindDone}; !slices.Equal(kinds, want) {
			t.Errorf("other kinds = %v, want %v", kinds, want)
		}
	})
}

// TestTailFollowsAnotherProcess tails a turn published by a worker process
// on the same SQLite file.
func TestTailFollowsAnotherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dsn := filepath.Join(t.TempDir(), "talaria.db")
	client := openStore(t, dsn)
	tail := Tail(t.Context(), client, "turn/p/1", 0, 10*time.Millisecond)

	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperDSNEnv+"="+dsn, helperTurnEnv+"=turn/p/1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("worker process: %v\n%s", err, out)
	}
	got := collect(t, tail)
	var want strings.Builder
	for i := range helperDeltas {
		want.WriteString(helperText(i))
	}
	if text := deltaText(got); text != want.String() {
		t.Errorf("text = %q, want %q", text, want.String())
	}
	if last := got[len(got)-1]; last.Kind != KindDone || !strings.HasPrefix(last.Data, `{"pid":`) {
		t.Errorf("last event = %+v, want the worker's done", last)
	}
}

// TestTailLatency: every delta a publisher sends reaches a tail on another
// store, in order. How long each takes is BenchmarkTailLatency's to show.
func TestTailLatency(t *testing.T) {
	latencies := tailLatencies(t, filepath.Join(t.TempDir(), "talaria.db"), 100)
	slices.Sort(latencies)
	n := len(latencies)
	t.Logf("publish → tail latency with default FlushEvery %v and poll %v: p50 %v, p99 %v, max %v",
		DefaultFlushEvery, DefaultTailInterval, latencies[n/2].Round(time.Millisecond),
		latencies[n*99/100].Round(time.Millisecond), latencies[n-1].Round(time.Millisecond))
}

// BenchmarkTailLatency measures the time from Publish to the tail's
// receipt of 100 deltas 5 ms apart, with the default flush interval and
// poll, on one SQLite file; it reports the median, p99 and worst.
func BenchmarkTailLatency(b *testing.B) {
	var all []time.Duration
	for b.Loop() {
		all = append(all, tailLatencies(b, filepath.Join(b.TempDir(), "talaria.db"), 100)...)
	}
	slices.Sort(all)
	n := len(all)
	b.ReportMetric(float64(all[n/2].Microseconds())/1000, "ms-p50")
	b.ReportMetric(float64(all[n*99/100].Microseconds())/1000, "ms-p99")
	b.ReportMetric(float64(all[n-1].Microseconds())/1000, "ms-max")
}

// tailLatencies publishes n deltas 5 ms apart on one store of dsn, tails
// them from another and returns each one's time from Publish to receipt;
// a delta lost or out of order fails tb.
func tailLatencies(tb testing.TB, dsn string, n int) []time.Duration {
	tb.Helper()
	worker, client := openStore(tb, dsn), openStore(tb, dsn)
	tail := Tail(tb.Context(), client, "turn/l/1", 0, 0)
	p := NewPublisher(worker, "turn/l/1")

	var mu sync.Mutex // the store carries the events, not a Go channel
	sent := make([]time.Time, n)
	go func() {
		for i := range n {
			mu.Lock()
			sent[i] = time.Now()
			mu.Unlock()
			p.Publish(KindDelta, fmt.Sprintf("%d,", i))
			time.Sleep(5 * time.Millisecond)
		}
		p.Publish(KindDone, "")
	}()
	var latencies []time.Duration
	next := 0
	for ev := range tail {
		now := time.Now()
		if ev.Kind != KindDelta {
			continue
		}
		for _, piece := range strings.Split(strings.TrimSuffix(ev.Data, ","), ",") {
			if piece != fmt.Sprint(next) {
				tb.Fatalf("delta %q, want %d", piece, next)
			}
			mu.Lock()
			latencies = append(latencies, now.Sub(sent[next]))
			mu.Unlock()
			next++
		}
	}
	if err := p.Close(tb.Context()); err != nil {
		tb.Fatalf("Close: %v", err)
	}
	if len(latencies) != n {
		tb.Fatalf("got %d deltas, want %d", len(latencies), n)
	}
	return latencies
}

func TestTailResumesAfterID(t *testing.T) {
	defer goleak.VerifyNone(t)
	src := &memSink{}
	var evs []models.Event
	for i := range 10 {
		evs = append(evs, models.Event{TurnID: "t", Kind: KindDelta, Data: fmt.Sprint(i)})
	}
	evs = append(evs, models.Event{TurnID: "t", Kind: KindDone})
	if err := src.AppendEvents(t.Context(), evs); err != nil {
		t.Fatal(err)
	}
	got := collect(t, Tail(t.Context(), src, "t", 6, time.Millisecond))
	if text := deltaText(got); text != "6789" || got[len(got)-1].Kind != KindDone {
		t.Errorf("resumed tail = %+v, want deltas 6789 and done", got)
	}
}

func TestTailPagesWithoutWaiting(t *testing.T) {
	defer goleak.VerifyNone(t)
	src := &memSink{}
	var evs []models.Event
	var want strings.Builder
	for i := range 3*tailPage + 17 {
		want.WriteString(fmt.Sprint(i, ","))
		evs = append(evs, models.Event{TurnID: "t", Kind: KindDelta, Data: fmt.Sprint(i, ",")})
	}
	evs = append(evs, models.Event{TurnID: "t", Kind: KindDone})
	if err := src.AppendEvents(t.Context(), evs); err != nil {
		t.Fatal(err)
	}
	// A tail that waited its interval (an hour) between full pages would
	// not end within collect's patience.
	got := collect(t, Tail(t.Context(), src, "t", 0, time.Hour))
	if deltaText(got) != want.String() {
		t.Errorf("paged tail lost or reordered events")
	}
}

func TestTailStopsOnCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name   string
		events int  // stored before tailing
		read   bool // whether the test reads the channel before canceling
	}{
		{"waiting for events", 0, true},
		{"blocked on a reader that went away", 5, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &memSink{}
			for i := range tc.events {
				_ = src.AppendEvents(t.Context(), []models.Event{{TurnID: "t", Kind: KindDelta, Data: fmt.Sprint(i)}})
			}
			ctx, cancel := context.WithCancel(t.Context())
			ch := Tail(ctx, src, "t", 0, time.Millisecond)
			if tc.read {
				select {
				case ev := <-ch:
					t.Fatalf("unexpected event %+v", ev)
				case <-time.After(30 * time.Millisecond):
				}
			}
			cancel()
			deadline := time.After(time.Minute)
			for {
				select {
				case _, ok := <-ch:
					if !ok {
						return
					}
				case <-deadline:
					t.Fatal("channel not closed after cancel")
				}
			}
		})
	}
}

// flakySource fails its first failures polls.
type flakySource struct {
	Source
	mu       sync.Mutex
	failures int
	calls    int
}

func (f *flakySource) EventsAfter(ctx context.Context, turnID string, afterID int64, limit int) ([]models.Event, error) {
	f.mu.Lock()
	f.calls++
	fail := f.calls <= f.failures
	f.mu.Unlock()
	if fail {
		return nil, errors.New("database restarting")
	}
	return f.Source.EventsAfter(ctx, turnID, afterID, limit)
}

func TestTailRetriesErrors(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := &memSink{}
	if err := mem.AppendEvents(t.Context(), []models.Event{
		{TurnID: "t", Kind: KindDelta, Data: "still "},
		{TurnID: "t", Kind: KindDelta, Data: "here"},
		{TurnID: "t", Kind: KindDone},
	}); err != nil {
		t.Fatal(err)
	}
	src := &flakySource{Source: mem, failures: 3}
	got := collect(t, Tail(t.Context(), src, "t", 0, time.Millisecond))
	if deltaText(got) != "still here" || len(got) != 3 {
		t.Errorf("got %+v after failures, want every event", got)
	}
	if src.calls != 4 {
		t.Errorf("%d polls, want 3 failed and 1 good", src.calls)
	}

	if got := collect(t, Tail(t.Context(), nil, "t", 0, 0)); len(got) != 0 {
		t.Errorf("Tail without source delivered %v", got)
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		interval time.Duration
		failures int
		want     time.Duration
	}{
		{100 * time.Millisecond, 1, 100 * time.Millisecond},
		{100 * time.Millisecond, 2, 200 * time.Millisecond},
		{100 * time.Millisecond, 4, 800 * time.Millisecond},
		{100 * time.Millisecond, 10, maxTailBackoff},
		{100 * time.Millisecond, 1 << 30, maxTailBackoff},
		{time.Minute, 3, time.Minute},
	}
	for _, tc := range tests {
		if got := backoff(tc.interval, tc.failures); got != tc.want {
			t.Errorf("backoff(%v, %d) = %v, want %v", tc.interval, tc.failures, got, tc.want)
		}
	}
}
