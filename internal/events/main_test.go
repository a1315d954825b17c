package events

import (
	"github.com/talaria-agent/talaria/internal/pgtest"

	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/talaria-agent/talaria/models"
)

// helperDSNEnv, when set, makes the test binary run as a worker process
// that publishes helperDeltas deltas and a "done" event of the turn in
// helperTurnEnv, instead of running the tests.
const (
	helperDSNEnv  = "TALARIA_EVENTS_HELPER_DSN"
	helperTurnEnv = "TALARIA_EVENTS_HELPER_TURN"
	helperDeltas  = 300
)

func TestMain(m *testing.M) {
	if os.Getenv(helperDSNEnv) != "" {
		os.Exit(runHelperProcess())
	}
	goleak.VerifyTestMain(m)
}

func runHelperProcess() int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := models.Open(ctx, os.Getenv(helperDSNEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	if err := s.MigrateEvents(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p := NewPublisher(s, os.Getenv(helperTurnEnv), WithFlushEvery(10*time.Millisecond))
	for i := range helperDeltas {
		p.Publish(KindDelta, helperText(i))
		if i%50 == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	p.Publish(KindDone, `{"pid":`+strconv.Itoa(os.Getpid())+`}`)
	if err := p.Close(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func helperText(i int) string { return fmt.Sprintf("t%d ", i) }

// eachDB runs fn as subtests "sqlite" and "postgres", each with the DSN of
// a fresh database. The PostgreSQL one is skipped without
// TALARIA_TEST_POSTGRES_DSN, unless CI=true.
func eachDB(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, filepath.Join(t.TempDir(), "talaria.db")) })
	t.Run("postgres", func(t *testing.T) { fn(t, postgresTestDSN(t)) })
}

// postgresTestDSN is a PostgreSQL schema of this test's own (pgtest.DSN).
func postgresTestDSN(t *testing.T) string { return pgtest.DSN(t, "events") }

// openStore opens dsn with the events table migrated and closes the Store
// when the test ends.
func openStore(t testing.TB, dsn string) *models.Store {
	t.Helper()
	s, err := models.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := s.MigrateEvents(t.Context()); err != nil {
		t.Fatalf("MigrateEvents: %v", err)
	}
	return s
}

// allEvents reads every stored event of a turn, page by page.
func allEvents(t *testing.T, src Source, turnID string) []models.Event {
	t.Helper()
	var out []models.Event
	var after int64
	for {
		evs, err := src.EventsAfter(t.Context(), turnID, after, 0)
		if err != nil {
			t.Fatalf("EventsAfter: %v", err)
		}
		if len(evs) == 0 {
			return out
		}
		out = append(out, evs...)
		after = evs[len(evs)-1].ID
	}
}

// countingSink passes batches to another Sink and counts them.
type countingSink struct {
	inner Sink
	delay time.Duration // before each write

	mu       sync.Mutex
	calls    int
	rows     int
	maxBatch int
}

func (c *countingSink) AppendEvents(ctx context.Context, evs []models.Event) error {
	if c.delay > 0 {
		time.Sleep(c.delay)
	}
	c.mu.Lock()
	c.calls++
	c.rows += len(evs)
	c.maxBatch = max(c.maxBatch, len(evs))
	c.mu.Unlock()
	return c.inner.AppendEvents(ctx, evs)
}

func (c *countingSink) counts() (calls, rows, maxBatch int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, c.rows, c.maxBatch
}

// memSink keeps events in memory and numbers them like the store. A write
// waits while gate is open (not closed) and fails with err when set.
type memSink struct {
	gate chan struct{}
	err  error

	mu      sync.Mutex
	evs     []models.Event
	batches []int
	wrote   chan struct{} // receives after every write, if not nil
}

func (m *memSink) AppendEvents(ctx context.Context, evs []models.Event) error {
	if m.gate != nil {
		select {
		case <-m.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if m.err != nil {
		return m.err
	}
	m.mu.Lock()
	for _, ev := range evs {
		ev.ID = int64(len(m.evs) + 1)
		m.evs = append(m.evs, ev)
	}
	m.batches = append(m.batches, len(evs))
	m.mu.Unlock()
	if m.wrote != nil {
		select {
		case m.wrote <- struct{}{}:
		default:
		}
	}
	return nil
}

func (m *memSink) EventsAfter(_ context.Context, turnID string, afterID int64, limit int) ([]models.Event, error) {
	if limit <= 0 {
		limit = models.DefaultEventsLimit
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []models.Event
	for _, ev := range m.evs {
		if ev.TurnID == turnID && ev.ID > afterID && len(out) < limit {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (m *memSink) snapshot() ([]models.Event, []int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]models.Event(nil), m.evs...), append([]int(nil), m.batches...)
}

var errSinkDown = errors.New("sink down")
