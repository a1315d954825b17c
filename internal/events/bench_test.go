package events

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/models"
)

// discardSink accepts every batch and keeps nothing.
type discardSink struct{}

func (discardSink) AppendEvents(context.Context, []models.Event) error { return nil }

// BenchmarkPublishDeltas measures publishing one streamed delta, including
// writing it: the Publisher is closed (every event written) inside the
// timed loop's total.
func BenchmarkPublishDeltas(b *testing.B) {
	sinks := []struct {
		name string
		open func(b *testing.B) Sink
	}{
		{"discard", func(*testing.B) Sink { return discardSink{} }},
		{"sqlite", func(b *testing.B) Sink {
			s, err := models.Open(b.Context(), filepath.Join(b.TempDir(), "talaria.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			if err := s.MigrateEvents(b.Context()); err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
	for _, sk := range sinks {
		b.Run(sk.name, func(b *testing.B) {
			counted := &countingSink{inner: sk.open(b)}
			p := NewPublisher(counted, "turn/bench/1")
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				p.Publish(KindDelta, "token ")
			}
			published := time.Since(start)
			if err := p.Close(b.Context()); err != nil {
				b.Fatal(err)
			}
			total := time.Since(start)
			calls, rows, _ := counted.counts()
			b.ReportMetric(float64(published.Nanoseconds())/float64(b.N), "ns/delta")
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/delta-stored")
			b.ReportMetric(float64(b.N)/float64(max(calls, 1)), "deltas/write")
			b.ReportMetric(float64(rows)/float64(b.N), "rows/delta")
		})
	}
}

// BenchmarkPublishToFailingSink measures publishing 10,000 deltas (and a
// tool start every thousand) while every write fails or panics: Publish
// does not wait for a sink that is down.
func BenchmarkPublishToFailingSink(b *testing.B) {
	for _, sk := range []struct {
		name string
		sink Sink
	}{{"error", &memSink{err: errSinkDown}}, {"panic", panicSink{}}} {
		b.Run(sk.name, func(b *testing.B) {
			for b.Loop() {
				p := NewPublisher(sk.sink, "turn/f/1", WithMaxBatch(16), WithFlushEvery(time.Millisecond),
					WithLogger(slog.New(slog.DiscardHandler)))
				publishThroughOutage(p)
				b.StopTimer()
				_ = p.Close(b.Context())
				b.StartTimer()
			}
		})
	}
}

// BenchmarkPublisherCloseHonorsContext measures Close with a 50 ms
// context while the sink never takes a write: about the context's 50 ms.
func BenchmarkPublisherCloseHonorsContext(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		p := NewPublisher(&memSink{gate: make(chan struct{})}, "turn", WithMaxBatch(2), WithBufferSize(4),
			WithFlushEvery(time.Millisecond), WithLogger(slog.New(slog.DiscardHandler)))
		for range 100 {
			p.Publish(KindDelta, "d")
			p.Publish(KindStatus, "s")
		}
		ctx, cancel := context.WithTimeout(b.Context(), 50*time.Millisecond)
		b.StartTimer()
		_ = p.Close(ctx)
		cancel()
	}
}

// BenchmarkTailPages measures tailing three full pages and a part of one
// with a poll interval of an hour: full pages are read one after the
// other, without a wait.
func BenchmarkTailPages(b *testing.B) {
	src := &memSink{}
	var evs []models.Event
	for range 3*tailPage + 17 {
		evs = append(evs, models.Event{TurnID: "t", Kind: KindDelta, Data: "x"})
	}
	evs = append(evs, models.Event{TurnID: "t", Kind: KindDone})
	if err := src.AppendEvents(b.Context(), evs); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		n := 0
		for range Tail(b.Context(), src, "t", 0, time.Hour) {
			n++
		}
		if n != len(evs) {
			b.Fatalf("tailed %d events, want %d", n, len(evs))
		}
	}
}
