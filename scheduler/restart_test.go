package scheduler

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/models"
)

// testClock is a clock a test sets; it counts how often it was read since.
type testClock struct {
	mu    sync.Mutex
	now   time.Time
	reads int
}

func newTestClock(now time.Time) *testClock { return &testClock{now: now} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	return c.now
}

func (c *testClock) Set(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now, c.reads = now, 0
}

func (c *testClock) readsSinceSet() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// onceAYear is a tick spec that does not fire while a test runs: only the
// tick at start ticks.
const onceAYear = "0 0 0 1 1 *"

// stopTicker stops tk within a minute.
func stopTicker(t *testing.T, tk *Ticker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := tk.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

// nextResult waits for the next tick's outcome.
func nextResult(t *testing.T, results <-chan Result) Result {
	t.Helper()
	select {
	case res := <-results:
		return res
	case <-time.After(time.Minute):
		t.Fatal("no tick within a minute")
		return Result{}
	}
}

// TestShortRestartAcrossAMinute: a scheduler ticks 10:00, is killed at
// 10:00:58 and started again at 10:01:02. Its tick at start runs the 10:01
// slot, and the 10:02 tick runs 10:02: under every catch-up policy each
// slot runs once and none is recorded missed.
func TestShortRestartAcrossAMinute(t *testing.T) {
	for _, policy := range []string{models.CatchUpLast, models.CatchUpNone, models.CatchUpAll} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			st := openStore(t, filepath.Join(t.TempDir(), "talaria.db"))
			f := newFakeTemporal()
			createJob(t, st, models.CronJob{ID: "j", Schedule: "* * * * *", Enabled: true, CatchUp: policy,
				CreatedAt: mustTime(t, day+"09:59:30Z")})
			results := make(chan Result, 10)
			onTick := WithOnTick(func(res Result, err error) {
				if err != nil {
					t.Errorf("tick: %v", err)
				}
				results <- res
			})

			clock := newTestClock(mustTime(t, day+"10:00:00Z"))
			first := NewTicker(st, f, f, WithClock(clock.Now), WithTickSpec(onceAYear), onTick)
			if err := first.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := refs(nextResult(t, results).Started); !equal(got, []string{"j@10:00"}) {
				t.Fatalf("the first scheduler's tick started %v", got)
			}
			clock.Set(mustTime(t, day+"10:00:58Z"))
			stopTicker(t, first) // the process ends two seconds before the minute

			clock.Set(mustTime(t, day+"10:01:02Z"))
			second := NewTicker(st, f, f, WithClock(clock.Now), WithTickSpec(onceAYear), onTick)
			if err := second.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			defer stopTicker(t, second)
			res := nextResult(t, results)
			if got := refs(res.Started); !equal(got, []string{"j@10:01"}) || len(res.Missed) != 0 {
				t.Fatalf("the tick at start started %v, missed %v; want the 10:01 slot", got, refs(res.Missed))
			}
			clock.Set(mustTime(t, day+"10:02:00Z"))
			res, err := second.TickNow(t.Context())
			if err != nil || !equal(refs(res.Started), []string{"j@10:02"}) || len(res.Missed) != 0 {
				t.Fatalf("10:02 tick: started %v, missed %v, %v", refs(res.Started), refs(res.Missed), err)
			}

			calls, started := f.counts()
			if calls != 3 || started != 3 {
				t.Errorf("Starter: %d calls, %d workflows; want 3 and 3", calls, started)
			}
			runs, err := st.CronRuns(t.Context(), "j", 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range runs {
				if r.Status != models.RunStarted {
					t.Errorf("slot %s recorded %s", r.ScheduledAt.Format("15:04"), r.Status)
				}
			}
			if len(runs) != 3 {
				t.Errorf("%d runs recorded, want 3", len(runs))
			}
		})
	}
}

// blockingStarter holds its first Start until released.
type blockingStarter struct {
	*fakeTemporal
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (b *blockingStarter) Start(ctx context.Context, job models.CronJob, slot time.Time, workflowID string) error {
	b.once.Do(func() {
		close(b.entered)
		<-b.release
	})
	return b.fakeTemporal.Start(ctx, job, slot, workflowID)
}

// TestTickerSlowTickDelaysTheNext: while the tick of 10:00 hangs in its
// Starter, the ticks of 10:01 and 10:02 come due. They wait and then tick
// their own minutes, in order: every slot starts and none is recorded
// missed, although the job catches up only its last slot after downtime.
func TestTickerSlowTickDelaysTheNext(t *testing.T) {
	t.Parallel()
	st := openStore(t, filepath.Join(t.TempDir(), "talaria.db"))
	b := &blockingStarter{fakeTemporal: newFakeTemporal(), entered: make(chan struct{}), release: make(chan struct{})}
	createJob(t, st, models.CronJob{ID: "j", Schedule: "* * * * *", Enabled: true, CreatedAt: mustTime(t, day+"09:59:30Z")})
	clock := newTestClock(mustTime(t, day+"10:00:05Z"))
	results := make(chan Result, 1000)
	tk := NewTicker(st, b, b.fakeTemporal, WithClock(clock.Now), WithTickSpec("* * * * * *"),
		WithOnTick(func(res Result, err error) {
			if err != nil {
				t.Errorf("tick: %v", err)
			}
			results <- res
		}))
	if err := tk.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer stopTicker(t, tk)
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(b.release) }) }
	defer release() // before stopTicker, which waits for the tick
	select {
	case <-b.entered:
	case <-time.After(time.Minute):
		t.Fatal("the tick at start did not reach the Starter")
	}
	for _, now := range []string{"10:01:05Z", "10:02:05Z"} {
		clock.Set(mustTime(t, day+now))
		waitUntil(t, func() bool { return clock.readsSinceSet() > 0 }) // a tick came due
	}
	release()

	var started, missed []SlotRef
	for !equal(refs(started), []string{"j@10:00", "j@10:01", "j@10:02"}) {
		select {
		case res := <-results:
			started, missed = append(started, res.Started...), append(missed, res.Missed...)
		case <-time.After(time.Minute):
			t.Fatalf("started %v, missed %v; want 10:00, 10:01 and 10:02 started", refs(started), refs(missed))
		}
	}
	if len(missed) != 0 {
		t.Errorf("missed %v", refs(missed))
	}
}
