package events

import (
	"context"
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
