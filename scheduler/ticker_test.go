package scheduler

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/models"
)

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestTickerTicksAndStops(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		st := openStore(t, dsn)
		f := newFakeTemporal()
		createJob(t, st, models.CronJob{ID: "j", Schedule: "* * * * *", Enabled: true, CreatedAt: mustTime(t, day+"09:59:30Z")})
		createJob(t, st, models.CronJob{ID: "bad", Schedule: "sometimes", Enabled: true, CreatedAt: mustTime(t, day+"09:59:30Z")})

		var logs syncBuffer
		results := make(chan Result, 100)
		clock := func() time.Time { return mustTime(t, day+"10:00:07Z") }
		tk := NewTicker(st, f, f,
			WithClock(clock),
			WithTickSpec("* * * * * *"), // every second, for the test
			WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
			WithOnTick(func(res Result, err error) {
				if err != nil {
					t.Errorf("tick: %v", err)
				}
				results <- res
			}))
		if err := tk.Start(t.Context()); err != nil {
			t.Fatalf("Start: %v", err)
		}
		if err := tk.Start(t.Context()); !errors.Is(err, ErrTickerStarted) {
			t.Errorf("second Start = %v, want ErrTickerStarted", err)
		}

		var first Result
		select {
		case first = <-results:
		case <-time.After(time.Minute):
			t.Fatal("no tick within a minute")
		}
		if got := refs(first.Started); !equal(got, []string{"j@10:00"}) || len(first.Errors) != 1 {
			t.Errorf("first tick started %v, errors %v", got, first.Errors)
		}
		// Later ticks of the same minute find the slot handled.
		select {
		case res := <-results:
			if len(res.Started) != 0 {
				t.Errorf("second tick started %v", refs(res.Started))
			}
		case <-time.After(time.Minute):
			t.Fatal("no second tick within a minute")
		}

		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if err := tk.Stop(ctx); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		for len(results) > 0 {
			<-results
		}
		time.Sleep(1500 * time.Millisecond) // room for a tick after Stop to show
		if n := len(results); n != 0 {
			t.Errorf("%d ticks after Stop", n)
		}
		if calls, _ := f.counts(); calls != 1 {
			t.Errorf("Starter called %d times, want 1", calls)
		}
		if !bytes.Contains([]byte(logs.String()), []byte(`"cron job failed"`)) {
			t.Errorf("the failing job was not logged:\n%s", logs.String())
		}

		res, err := tk.TickNow(t.Context())
		if err != nil || len(res.Started) != 0 || len(res.Errors) != 1 {
			t.Errorf("TickNow = %+v, %v", res, err)
		}
	})
}

func TestTickerOptions(t *testing.T) {
	tk := NewTicker(nil, nil, nil, WithTickSpec("every now and then"))
	if err := tk.Start(t.Context()); err == nil {
		t.Error("Start with a malformed tick spec succeeded")
	}
	if err := NewTicker(nil, nil, nil).Stop(t.Context()); err != nil {
		t.Errorf("Stop of a ticker never started: %v", err)
	}
	c := newConfig([]Option{nil, WithClock(nil), WithLogger(nil), WithMaxMissed(-1), WithStartGrace(0), WithTickSpec("")})
	if c.clock == nil || c.logger == nil || c.maxMissed != DefaultMaxMissed || c.grace != DefaultStartGrace || c.spec != DefaultTickSpec {
		t.Errorf("defaults not kept: %+v", c)
	}
}
