package models

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// eventChannel is the PostgreSQL notification channel on which the
// writers of events announce them: the payload is "MAXID TURNID".
const eventChannel = "talaria_events"

// eventScanEvery is how often a SQLite Store looks for events other
// processes stored, while anything watches: one query for the whole
// process, however many turns are watched.
const eventScanEvery = 50 * time.Millisecond

// listenCheckEvery is how long the PostgreSQL listener waits for a
// notification before it checks that its connection still answers.
const listenCheckEvery = 30 * time.Second

// blindWakeEvery is how often every watch is woken while the Store cannot
// see other processes' events (its PostgreSQL listener is reconnecting, or
// a scan failed): the watchers poll until it sees again.
const blindWakeEvery = 100 * time.Millisecond

// eventHub wakes the watchers of a turn when its events are stored: by
// this process (AppendEvents tells it after commit), and by others (a
// PostgreSQL LISTEN, or on SQLite one scan of the events table per
// process). One goroutine per Store does the listening, from the first
// watch until Close.
type eventHub struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
	// seen is the highest event ID each watched turn was woken for, so that
	// the scan or the notification of an event this process stored does
	// not wake its watchers a second time.
	seen map[string]int64

	started bool
	closed  bool // the Store closed: no goroutine starts any more
	stop    context.CancelFunc
	done    chan struct{}
}

// WatchEvents returns a channel that receives a value soon after events of
// turnID are stored, by this process or by another one sharing the
// database, and a func that ends the watch. Wakes are coalesced: one value
// may stand for many events, and a wake is a hint to read EventsAfter, not
// a promise that it returns anything. Watch before reading, so that no
// event stored in between goes unnoticed.
func (s *Store) WatchEvents(turnID string) (<-chan struct{}, func()) {
	h := &s.events
	c := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs, h.seen = map[string]map[chan struct{}]struct{}{}, map[string]int64{}
	}
	if h.subs[turnID] == nil {
		h.subs[turnID] = map[chan struct{}]struct{}{}
	}
	h.subs[turnID][c] = struct{}{}
	if !h.started && !h.closed {
		h.started = true
		ctx, stop := context.WithCancel(context.Background())
		h.stop, h.done = stop, make(chan struct{})
		go func() {
			defer close(h.done)
			s.watchOthers(ctx)
		}()
	}
	return c, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[turnID], c)
		if len(h.subs[turnID]) == 0 {
			delete(h.subs, turnID)
			delete(h.seen, turnID)
		}
	}
}

// wake wakes the watchers of turnID for events up to maxID (0: unknown,
// always wake).
func (h *eventHub) wake(turnID string, maxID int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := h.subs[turnID]
	if len(subs) == 0 {
		return
	}
	if maxID > 0 {
		if maxID <= h.seen[turnID] {
			return
		}
		h.seen[turnID] = maxID
	}
	for c := range subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// wakeAll wakes every watcher.
func (h *eventHub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, subs := range h.subs {
		for c := range subs {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
}

// watching reports whether anything watches.
func (h *eventHub) watching() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs) > 0
}

// close stops the listening goroutine and waits for it.
func (h *eventHub) close() {
	h.mu.Lock()
	h.closed = true
	stop, done := h.stop, h.done
	h.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// stored tells the watchers of rows' turns about them, after their
// commit: this process's at once, other processes' through announce.
func (s *Store) stored(ctx context.Context, rows []Event) {
	for turn, maxID := range maxIDs(rows) {
		s.events.wake(turn, maxID)
	}
	s.announce(ctx, rows)
}

// maxIDs is the highest ID of rows per turn. Pure.
func maxIDs(rows []Event) map[string]int64 {
	out := map[string]int64{}
	for _, ev := range rows {
		out[ev.TurnID] = max(out[ev.TurnID], ev.ID)
	}
	return out
}

// announce tells other processes about rows on PostgreSQL, after their
// commit: one NOTIFY per turn, each its own short transaction. Not in the
// writing transaction: PostgreSQL serialises the commits of notifying
// transactions on one lock, which would hold every event write of the
// database behind each other's fsync. A notification that fails costs the
// other processes' followers their next read (events.Tail reads at least
// every 5 s anyway); it is logged, and the events stay stored. SQLite
// needs nothing (scanEvents).
func (s *Store) announce(ctx context.Context, rows []Event) {
	if s.dialect.name() != "postgres" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for turn, maxID := range maxIDs(rows) {
		if err := s.db.WithContext(ctx).Exec("SELECT pg_notify(?, ?)", eventChannel, strconv.FormatInt(maxID, 10)+" "+turn).Error; err != nil {
			slog.Warn("models: could not announce stored events to other processes", "turn", turn, "error", err)
		}
	}
}

// watchOthers wakes watchers for the events other processes store, until
// ctx ends: by LISTEN on PostgreSQL, by scanning on SQLite.
func (s *Store) watchOthers(ctx context.Context) {
	if d, ok := s.dialect.(*postgresDialect); ok {
		s.listenEvents(ctx, d.config)
		return
	}
	s.scanEvents(ctx)
}

// listenEvents follows the PostgreSQL notifications of stored events on a
// connection of its own, reconnecting (with every watcher woken every
// blindWakeEvery meanwhile) when it is lost.
func (s *Store) listenEvents(ctx context.Context, cfg *pgx.ConnConfig) {
	failures := 0
	for ctx.Err() == nil {
		listened, err := s.listenOnce(ctx, cfg)
		if ctx.Err() != nil {
			return
		}
		if listened {
			failures = 0
		}
		failures++
		if failures == 1 {
			slog.Warn("models: lost the event notifications; polling until they are back", "error", err)
		}
		s.blind(ctx, min(time.Duration(failures)*blindWakeEvery, 5*time.Second))
	}
}

// listenOnce listens until the connection fails or ctx ends; listened
// says whether it got as far as listening.
func (s *Store) listenOnce(ctx context.Context, cfg *pgx.ConnConfig) (listened bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+eventChannel); err != nil {
		return false, fmt.Errorf("listen: %w", err)
	}
	s.events.wakeAll() // what was stored while nobody listened
	for {
		wctx, cancel := context.WithTimeout(ctx, listenCheckEvery)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil && ctx.Err() == nil && wctx.Err() != nil {
			// Quiet for a while: a connection that died without a word
			// (a half-open TCP connection) would stay quiet for ever.
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = conn.Ping(pctx)
			cancel()
			if err == nil {
				continue
			}
		}
		if err != nil {
			return true, fmt.Errorf("wait: %w", err)
		}
		id, turn, ok := strings.Cut(n.Payload, " ")
		maxID, _ := strconv.ParseInt(id, 10, 64)
		if ok {
			s.events.wake(turn, maxID)
		}
	}
}

// blind wakes every watcher every blindWakeEvery for d, or until ctx ends.
func (s *Store) blind(ctx context.Context, d time.Duration) {
	t := time.NewTicker(blindWakeEvery)
	defer t.Stop()
	end := time.After(d)
	for {
		s.events.wakeAll()
		select {
		case <-ctx.Done():
			return
		case <-end:
			return
		case <-t.C:
		}
	}
}

// scanEvents looks for new events every eventScanEvery while anything
// watches, with one query for every turn: SQLite commits one writer at a
// time, so the events after the last ID seen are exactly the new ones.
// A failed scan wakes every watcher. When nothing watches, the last ID is
// forgotten: a later watch starts from the table's end, not from events
// nobody waited for.
func (s *Store) scanEvents(ctx context.Context) {
	var cursor int64
	known := false
	t := time.NewTicker(eventScanEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !s.events.watching() {
			known = false
			continue
		}
		if !known {
			if err := s.db.WithContext(ctx).Model(&Event{}).Select("COALESCE(MAX(id), 0)").Scan(&cursor).Error; err != nil {
				s.events.wakeAll()
				continue
			}
			known = true
			s.events.wakeAll() // what came before the cursor was known
		}
		var rows []struct {
			TurnID string
			MaxID  int64
		}
		err := s.db.WithContext(ctx).Model(&Event{}).Select("turn_id, MAX(id) AS max_id").
			Where("id > ?", cursor).Group("turn_id").Scan(&rows).Error
		if err != nil {
			if ctx.Err() == nil {
				s.events.wakeAll()
			}
			continue
		}
		for _, r := range rows {
			cursor = max(cursor, r.MaxID)
			s.events.wake(r.TurnID, r.MaxID)
		}
	}
}
