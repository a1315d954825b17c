package events

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/talaria-agent/talaria/models"
)

// writeTimeout bounds one write of a batch, so that a database that stopped
// answering holds back the turn's progress, never the turn.
const writeTimeout = 15 * time.Second

// Sink stores batches of events; *models.Store is one.
type Sink interface {
	AppendEvents(ctx context.Context, evs []models.Event) error
}

// Publisher batches the events of one turn and writes them to a Sink from
// a goroutine of its own. It is safe for concurrent use; events are written
// in the order Publish was called. A nil *Publisher discards everything.
type Publisher struct {
	sink   Sink
	turnID string
	cfg    config

	mu      sync.Mutex
	pending []models.Event
	// merged holds the text of the last pending event while later pieces
	// are merged into it, so that merging costs no quadratic copying.
	merged  strings.Builder
	merging bool
	since   time.Time // when pending became non-empty
	closed  bool
	// superseded: a later attempt of the model call began (WithAttempt).
	superseded bool
	err        error // the first write error
	failing    int   // consecutive failed writes

	wake         chan struct{} // a hint that pending changed; capacity 1
	closing      chan struct{} // closed by Close
	done         chan struct{} // closed when the writer goroutine ends
	writeCtx     context.Context
	cancelWrites context.CancelFunc
	closeOnce    sync.Once
}

// NewPublisher starts a Publisher of the events of turnID. Close must be
// called to write the last events and stop its goroutine.
func NewPublisher(sink Sink, turnID string, opts ...Option) *Publisher {
	writeCtx, cancel := context.WithCancel(context.Background())
	p := &Publisher{
		sink:         sink,
		turnID:       turnID,
		cfg:          newConfig(opts),
		wake:         make(chan struct{}, 1),
		closing:      make(chan struct{}),
		done:         make(chan struct{}),
		writeCtx:     writeCtx,
		cancelWrites: cancel,
	}
	if p.cfg.attempt > 0 {
		data, _ := json.Marshal(AttemptEvent{Call: p.cfg.call, Attempt: p.cfg.attempt})
		p.Publish(KindAttempt, string(data))
	}
	go p.run()
	return p
}

// Superseded reports whether a later attempt of the Publisher's model call
// began: its events are discarded from then on.
func (p *Publisher) Superseded() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.superseded
}

// Publish queues an event without waiting for the database. An empty piece
// of streamed text, an event with an empty or too long kind, and events
// published after Close are discarded. Invalid UTF-8 and NUL characters in
// data are replaced by U+FFFD, which every database stores.
func (p *Publisher) Publish(kind, data string) {
	if p == nil {
		return
	}
	if kind == "" || utf8.RuneCountInString(kind) > models.MaxEventKindLen {
		p.cfg.logger.Warn("events: discarding event with invalid kind", "turn", p.turnID, "kind", kind)
		return
	}
	if data == "" && streamed(kind) {
		return
	}
	data = sanitize(data)
	at := p.cfg.clock()

	p.mu.Lock()
	if p.closed || p.superseded {
		p.mu.Unlock()
		return
	}
	n := len(p.pending)
	if n >= p.cfg.bufferSize && streamed(kind) && p.pending[n-1].Kind == kind {
		if !p.merging {
			p.merged.WriteString(p.pending[n-1].Data)
			p.merging = true
		}
		p.merged.WriteString(data)
		p.mu.Unlock()
		return
	}
	p.endMerge()
	if n == 0 {
		p.since = time.Now()
	}
	p.pending = append(p.pending, models.Event{TurnID: p.turnID, Kind: kind, Data: data, At: at, ModelCall: p.cfg.call, Attempt: p.cfg.attempt})
	n++
	p.mu.Unlock()
	if n == 1 || n >= p.cfg.maxBatch {
		p.signal()
	}
}

// Close writes the pending events and stops the Publisher. If ctx ends
// first, the write under way is canceled and the events not yet written are
// discarded. Close returns the first write error (or why events were
// discarded); later calls return the same.
func (p *Publisher) Close(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		close(p.closing)
	})
	select {
	case <-p.done:
	case <-ctx.Done():
		p.cancelWrites()
		<-p.done
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// signal wakes the writer goroutine without blocking.
func (p *Publisher) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// endMerge stores the merged text in the last pending event. p.mu is held.
func (p *Publisher) endMerge() {
	if !p.merging {
		return
	}
	p.pending[len(p.pending)-1].Data = p.merged.String()
	p.merged.Reset()
	p.merging = false
}

// run writes batches until Close: a full batch at once, otherwise the
// pending events once the oldest has waited flushEvery.
func (p *Publisher) run() {
	defer close(p.done)
	defer p.cancelWrites()
	for {
		p.mu.Lock()
		n, since := len(p.pending), p.since
		p.mu.Unlock()

		if n >= p.cfg.maxBatch {
			p.writeBatch()
			continue
		}
		if n == 0 {
			select {
			case <-p.wake:
			case <-p.closing:
				p.drain()
				return
			}
			continue
		}
		wait := p.cfg.flushEvery - time.Since(since)
		if wait <= 0 {
			p.writeBatch()
			continue
		}
		timer := time.NewTimer(wait)
		select {
		case <-p.wake:
		case <-timer.C:
		case <-p.closing:
			timer.Stop()
			p.drain()
			return
		}
		timer.Stop()
	}
}

// drain writes every pending event, unless Close gave up waiting.
func (p *Publisher) drain() {
	for p.writeBatch() {
	}
}

// writeBatch takes up to maxBatch pending events and writes them. It
// reports whether it took any.
func (p *Publisher) writeBatch() bool {
	p.mu.Lock()
	p.endMerge()
	k := min(len(p.pending), p.cfg.maxBatch)
	if k == 0 {
		p.mu.Unlock()
		return false
	}
	batch := p.pending[:k:k]
	if k == len(p.pending) {
		p.pending = nil
	} else {
		p.pending = p.pending[k:]
	}
	p.mu.Unlock()

	if err := p.writeCtx.Err(); err != nil {
		p.failed(len(batch), fmt.Errorf("events: %d events of turn %q not written: close: %w", len(batch), p.turnID, err))
		return true
	}
	ctx, cancel := context.WithTimeout(p.writeCtx, writeTimeout)
	err := p.append(ctx, batch)
	cancel()
	if errors.Is(err, models.ErrSuperseded) {
		p.mu.Lock()
		p.superseded, p.pending = true, nil
		p.merged.Reset()
		p.merging = false
		p.mu.Unlock()
		p.cfg.logger.Debug("events: a later attempt of the model call began; this one's events are discarded", "turn", p.turnID, "call", p.cfg.call, "attempt", p.cfg.attempt)
		return true
	}
	if err != nil {
		p.failed(len(batch), fmt.Errorf("events: write %d events of turn %q: %w", len(batch), p.turnID, err))
		return true
	}
	p.mu.Lock()
	recovered := p.failing
	p.failing = 0
	p.mu.Unlock()
	if recovered > 0 {
		p.cfg.logger.Info("events: writes resumed", "turn", p.turnID, "failed_writes", recovered)
	}
	return true
}

// append calls the sink, turning a panic into an error: progress display
// must not bring the worker down.
func (p *Publisher) append(ctx context.Context, batch []models.Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sink panicked: %v", r)
		}
	}()
	if p.sink == nil {
		return fmt.Errorf("no sink")
	}
	return p.sink.AppendEvents(ctx, batch)
}

// failed records a lost batch: the first error is kept for Close and
// logged as a warning, later ones of the same outage at debug level.
func (p *Publisher) failed(lost int, err error) {
	p.mu.Lock()
	p.err = cmp.Or(p.err, err)
	p.failing++
	first := p.failing == 1
	p.mu.Unlock()
	level := slog.LevelDebug
	if first {
		level = slog.LevelWarn
	}
	p.cfg.logger.Log(context.Background(), level, "events: progress events lost", "turn", p.turnID, "events", lost, "error", err)
}

// sanitize replaces what a database cannot store in a text column.
func sanitize(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
