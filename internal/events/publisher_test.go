package events

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/talaria-agent/talaria/models"
)

// published is an event as given to Publish.
type published struct{ kind, data string }

func kindsAndData(evs []models.Event) []published {
	out := make([]published, len(evs))
	for i, ev := range evs {
		out[i] = published{ev.Kind, ev.Data}
	}
	return out
}

// mergeStreamed joins consecutive events of the same streamed kind, the
// only change a Publisher may make to what was published.
func mergeStreamed(in []published) []published {
	var out []published
	for _, ev := range in {
		if n := len(out); n > 0 && streamed(ev.kind) && out[n-1].kind == ev.kind {
			out[n-1].data += ev.data
			continue
		}
		out = append(out, ev)
	}
	return out
}

func equalPublished(a, b []published) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPublisherKeepsOrderAcrossBatches(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		base := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
		var ticks int
		clock := func() time.Time { ticks++; return base.Add(time.Duration(ticks) * time.Millisecond) }
		sink := &countingSink{inner: s}
		p := NewPublisher(sink, "turn/s/1", WithMaxBatch(7), WithFlushEvery(2*time.Millisecond), WithClock(clock))

		kinds := []string{KindDelta, KindDelta, KindToolStart, KindDelta, KindReasoning, KindToolEnd, KindStatus}
		var want []published
		for i := range 100 {
			ev := published{kinds[i%len(kinds)], fmt.Sprintf("%d;", i)}
			p.Publish(ev.kind, ev.data)
			want = append(want, ev)
			if i%13 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		p.Publish(KindDone, `{"reason":"text_response"}`)
		want = append(want, published{KindDone, `{"reason":"text_response"}`})
		if err := p.Close(t.Context()); err != nil {
			t.Fatalf("Close: %v", err)
		}

		got := allEvents(t, s, "turn/s/1")
		if !equalPublished(kindsAndData(got), want) {
			t.Fatalf("stored %v,\nwant %v", kindsAndData(got), want)
		}
		for i, ev := range got {
			if wantAt := base.Add(time.Duration(i+1) * time.Millisecond); !ev.At.Equal(wantAt) {
				t.Errorf("event %d At = %v, want %v", i, ev.At, wantAt)
			}
		}
		calls, rows, maxBatch := sink.counts()
		if calls < 2 || rows != len(want) || maxBatch > 7 {
			t.Errorf("writes: %d calls, %d rows, largest %d; want several calls of at most 7, %d rows", calls, rows, maxBatch, len(want))
		}
	})
}

func TestPublisherTenThousandDeltas(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		writer, reader := openStore(t, dsn), openStore(t, dsn)
		const n = 10000
		sink := &countingSink{inner: writer}
		p := NewPublisher(sink, "turn/big/1")

		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		tail := Tail(ctx, reader, "turn/big/1", 0, 10*time.Millisecond)
		var text strings.Builder
		tailed := make(chan int)
		go func() {
			events := 0
			for ev := range tail {
				events++
				if ev.Kind == KindDelta {
					text.WriteString(ev.Data)
				}
			}
			tailed <- events
		}()

		var want strings.Builder
		start := time.Now()
		for i := range n {
			d := fmt.Sprintf("d%d,", i)
			want.WriteString(d)
			p.Publish(KindDelta, d)
		}
		p.Publish(KindDone, "")
		publishTime := time.Since(start)
		if err := p.Close(ctx); err != nil {
			t.Fatalf("Close: %v", err)
		}
		events := <-tailed
		total := time.Since(start)

		if text.String() != want.String() {
			t.Fatalf("tailed text (%d bytes) differs from published text (%d bytes)", text.Len(), want.Len())
		}
		calls, rows, maxBatch := sink.counts()
		if calls > n/20 || maxBatch > DefaultMaxBatch {
			t.Errorf("%d writes (largest %d events) for %d deltas; want at most %d writes of at most %d", calls, maxBatch, n, n/20, DefaultMaxBatch)
		}
		stored := allEvents(t, reader, "turn/big/1")
		if len(stored) != rows || events != rows {
			t.Errorf("stored %d events, tailed %d, wrote %d rows", len(stored), events, rows)
		}
		t.Logf("%d deltas: %d writes, %d rows (largest batch %d); publish %.0f ns/delta; all tailed after %v",
			n, calls, rows, maxBatch, float64(publishTime.Nanoseconds())/n, total.Round(time.Millisecond))
	})
}

func TestPublisherMergesTextUnderSlowSink(t *testing.T) {
	defer goleak.VerifyNone(t)
	sink := &memSink{gate: make(chan struct{})}
	p := NewPublisher(sink, "turn", WithBufferSize(16), WithMaxBatch(4), WithFlushEvery(time.Millisecond))

	var want []published
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		for i := range 3000 {
			ev := published{KindDelta, fmt.Sprintf("%d ", i)}
			switch {
			case i%500 == 499:
				ev = published{KindToolStart, fmt.Sprintf(`{"i":%d}`, i)}
			case i%500 == 0:
				ev = published{KindToolEnd, fmt.Sprintf(`{"i":%d}`, i)}
			case i%700 < 50:
				ev.kind = KindReasoning
			}
			p.Publish(ev.kind, ev.data)
			want = append(want, ev)
		}
	}()
	// The sink does not write anything until the gate opens, yet every
	// Publish returns.
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("Publish blocked on a stalled sink")
	}
	close(sink.gate)
	if err := p.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}

	stored, batches := sink.snapshot()
	got := kindsAndData(stored)
	if !equalPublished(mergeStreamed(got), mergeStreamed(want)) {
		t.Fatalf("stored events, merged, differ from published ones:\n got %v\nwant %v", mergeStreamed(got), mergeStreamed(want))
	}
	tools := 0
	for _, ev := range got {
		if ev.kind == KindToolStart || ev.kind == KindToolEnd {
			tools++
		}
	}
	if tools != 12 {
		t.Errorf("stored %d tool events, want all 12", tools)
	}
	if len(got) >= len(want)/10 {
		t.Errorf("stored %d events for %d published; want streamed text merged", len(got), len(want))
	}
	for _, b := range batches {
		if b > 4 {
			t.Errorf("batch of %d events, want at most 4", b)
		}
	}
	t.Logf("%d events published to a stalled sink, %d stored in %d writes", len(want), len(got), len(batches))
}

func TestPublisherFlushTriggers(t *testing.T) {
	defer goleak.VerifyNone(t)
	waitWrite := func(t *testing.T, sink *memSink) {
		t.Helper()
		select {
		case <-sink.wrote:
		case <-time.After(time.Minute):
			t.Fatal("no write within a minute")
		}
	}

	t.Run("interval", func(t *testing.T) {
		sink := &memSink{wrote: make(chan struct{}, 1)}
		p := NewPublisher(sink, "turn", WithFlushEvery(30*time.Millisecond), WithMaxBatch(1000))
		start := time.Now()
		for i := range 3 {
			p.Publish(KindDelta, fmt.Sprint(i))
		}
		waitWrite(t, sink)
		// wallclock: a lower bound: the interval runs from the first publish, after start; load only delays the write
		if waited := time.Since(start); waited < 29*time.Millisecond {
			t.Errorf("written after %v, want after the 30ms interval", waited)
		}
		if _, batches := sink.snapshot(); len(batches) != 1 || batches[0] != 3 {
			t.Errorf("batches = %v, want [3]", batches)
		}
		if err := p.Close(t.Context()); err != nil {
			t.Fatalf("Close: %v", err)
		}
	})

	t.Run("max batch", func(t *testing.T) {
		sink := &memSink{wrote: make(chan struct{}, 1)}
		p := NewPublisher(sink, "turn", WithFlushEvery(time.Hour), WithMaxBatch(5))
		for i := range 5 {
			p.Publish(KindDelta, fmt.Sprint(i))
		}
		waitWrite(t, sink)
		p.Publish(KindDelta, "5")
		p.Publish(KindToolStart, "{}")
		time.Sleep(50 * time.Millisecond) // room for a wrong early write to show
		if _, batches := sink.snapshot(); len(batches) != 1 || batches[0] != 5 {
			t.Fatalf("batches before Close = %v, want [5]", batches)
		}
		if err := p.Close(t.Context()); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if _, batches := sink.snapshot(); len(batches) != 2 || batches[1] != 2 {
			t.Errorf("batches after Close = %v, want [5 2]", batches)
		}
	})
}

func TestPublisherClose(t *testing.T) {
	defer goleak.VerifyNone(t)
	sink := &memSink{}
	p := NewPublisher(sink, "turn", WithFlushEvery(time.Hour))
	for i := range 10 {
		p.Publish(KindDelta, fmt.Sprint(i))
	}
	if err := p.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if stored, batches := sink.snapshot(); len(stored) != 10 || len(batches) != 1 {
		t.Fatalf("after Close: %d events in %v, want 10 in one batch", len(stored), batches)
	}
	p.Publish(KindDelta, "late")
	if err := p.Close(t.Context()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if stored, _ := sink.snapshot(); len(stored) != 10 {
		t.Errorf("an event published after Close was written")
	}

	var nilPublisher *Publisher
	nilPublisher.Publish(KindDelta, "x")
	if err := nilPublisher.Close(t.Context()); err != nil {
		t.Errorf("Close of nil Publisher: %v", err)
	}
}

// panicSink panics on every write.
type panicSink struct{}

func (panicSink) AppendEvents(context.Context, []models.Event) error { panic("sink bug") }

func TestPublisherSurvivesFailingSink(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name    string
		sink    Sink
		wantErr func(error) bool
	}{
		{"error", &memSink{err: errSinkDown}, func(err error) bool { return errors.Is(err, errSinkDown) }},
		{"panic", panicSink{}, func(err error) bool { return err != nil && strings.Contains(err.Error(), "sink panicked: sink bug") }},
		{"nil", nil, func(err error) bool { return err != nil && strings.Contains(err.Error(), "no sink") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncBuffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			p := NewPublisher(tc.sink, "turn/f/1", WithMaxBatch(16), WithFlushEvery(time.Millisecond), WithLogger(logger))
			// Publish never waits for the sink: a publisher stuck on
			// the outage is given up after a minute. What a publish
			// costs is BenchmarkPublishToFailingSink's to show.
			published := make(chan struct{})
			go func() {
				defer close(published)
				publishThroughOutage(p)
			}()
			select {
			case <-published:
			case <-time.After(time.Minute):
				t.Fatal("Publish blocked on the failing sink for a minute")
			}
			err := p.Close(t.Context())
			if !tc.wantErr(err) {
				t.Errorf("Close = %v", err)
			}
			out := logs.String()
			if strings.Count(out, "level=WARN") != 1 || !strings.Contains(out, "turn=turn/f/1") {
				t.Errorf("want one warning about the outage, logged:\n%.2000s", out)
			}
		})
	}
}

// publishThroughOutage publishes 10,000 deltas and a tool start every
// thousand.
func publishThroughOutage(p *Publisher) {
	for i := range 10000 {
		p.Publish(KindDelta, "x")
		if i%1000 == 0 {
			p.Publish(KindToolStart, "{}")
		}
	}
}

func TestPublisherCloseHonorsContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	sink := &memSink{gate: make(chan struct{})} // never opens
	p := NewPublisher(sink, "turn", WithMaxBatch(2), WithBufferSize(4), WithFlushEvery(time.Millisecond),
		WithLogger(slog.New(slog.DiscardHandler)))
	for i := range 100 {
		p.Publish(KindDelta, fmt.Sprint(i))
		p.Publish(KindStatus, fmt.Sprint(i))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	closed := make(chan error, 1)
	go func() { closed <- p.Close(ctx) }()
	var err error
	select {
	case err = <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Close with a 50ms context had not returned after a minute")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Close = %v, want the canceled write", err)
	}
}

func TestPublisherConcurrentPublishers(t *testing.T) {
	defer goleak.VerifyNone(t)
	sink := &memSink{}
	p := NewPublisher(sink, "turn", WithMaxBatch(8), WithFlushEvery(time.Millisecond))
	const goroutines, each = 8, 500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				p.Publish(KindStatus, fmt.Sprintf("%d:%d", g, i))
			}
		})
	}
	wg.Wait()
	if err := p.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	stored, _ := sink.snapshot()
	if len(stored) != goroutines*each {
		t.Fatalf("stored %d events, want %d", len(stored), goroutines*each)
	}
	next := make([]int, goroutines)
	for _, ev := range stored {
		var g, i int
		if _, err := fmt.Sscanf(ev.Data, "%d:%d", &g, &i); err != nil || i != next[g] {
			t.Fatalf("event %q out of order (want %d:%d)", ev.Data, g, next[g])
		}
		next[g]++
	}
}

func TestPublishCleansEvents(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		p := NewPublisher(s, "turn/c/1", WithLogger(slog.New(slog.DiscardHandler)))
		p.Publish(KindDelta, "a\xffb")
		p.Publish(KindDelta, "")                        // nothing to show
		p.Publish("", "no kind")                        // discarded
		p.Publish(strings.Repeat("k", 33), "long kind") // discarded
		p.Publish(KindReasoning, "c\x00d")
		p.Publish(KindToolEnd, `{"name":"read_file","ok":true}`)
		p.Publish(KindDone, "")
		if err := p.Close(t.Context()); err != nil {
			t.Fatalf("Close: %v", err)
		}
		want := []published{
			{KindDelta, "a\uFFFDb"},
			{KindReasoning, "c\uFFFDd"},
			{KindToolEnd, `{"name":"read_file","ok":true}`},
			{KindDone, ""},
		}
		if got := kindsAndData(allEvents(t, s, "turn/c/1")); !equalPublished(got, want) {
			t.Errorf("stored %q, want %q", got, want)
		}
	})
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
