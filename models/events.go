package models

import (
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
)

// Event is one item of a turn's live progress: a piece of streamed reply
// text, a tool starting or finishing, a status change. Events are a display
// stream, not the record of the conversation (that is Message); they are
// written while the turn runs and read by clients that follow it, and can be
// pruned once nobody follows the turn any more.
//
// IDs grow in commit order for the events of one turn, so a client that has
// seen every event up to an ID asks for the ones after it (EventsAfter).
type Event struct {
	ID     int64     `gorm:"primaryKey;autoIncrement;index:idx_event_turn_id,priority:2"`
	TurnID string    `gorm:"index:idx_event_turn_id,priority:1;index:idx_event_turn_kind,priority:1;size:256"`
	Kind   string    `gorm:"size:32;index:idx_event_turn_kind,priority:2"` // "delta", "reasoning", "tool_start", "tool_end", "status", "done", ...
	Data   string    `gorm:"type:text;serializer:text"`
	At     time.Time `gorm:"index:idx_event_at"`
	// ModelCall and Attempt say which model call of the turn, and which
	// attempt of it, published the event (0 for events of no model call).
	// An attempt's events are refused once a later attempt of the turn has
	// begun (see KindAttempt), so a superseded attempt can show nothing.
	ModelCall int `gorm:"not null;default:0"`
	Attempt   int `gorm:"not null;default:0"`
}

// KindAttempt is the event that begins an attempt of a model call: the
// text of that call shown so far is to be replaced by what follows. The
// store refuses events of an earlier attempt (or of an earlier call) of
// the turn once it holds this one (ErrSuperseded).
const KindAttempt = "attempt"

// MaxEventKindLen is the longest Event.Kind the store accepts.
const MaxEventKindLen = 32

// DefaultEventsLimit is how many events EventsAfter returns when its limit
// is not positive.
const DefaultEventsLimit = 500

// eventInsertBatch caps the rows of one INSERT statement, keeping its bind
// parameters well below the limits of both databases.
const eventInsertBatch = 1000

// eventLockClass is the first key of the PostgreSQL advisory locks that
// serialise the event writers of one turn ("evnt" in ASCII). The two-key
// lock space does not overlap the one-key space of the migration lock.
const eventLockClass int32 = 0x65766e74

// MigrateEvents creates or updates the events table, under the same
// migration lock as the rest of the schema.
func (s *Store) MigrateEvents(ctx context.Context) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.dialect.lockMigrations(tx); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		return tx.AutoMigrate(&Event{})
	})
	if err != nil {
		return fmt.Errorf("models: migrate %s events table: %w", s.dialect.name(), err)
	}
	return nil
}

// AppendEvents stores evs in one transaction; their IDs grow in the order
// of evs. The IDs of evs are ignored and evs is not modified; a zero At is
// set to the current time.
//
// Every event needs a TurnID and a Kind of at most MaxEventKindLen
// characters; otherwise nothing is stored and the error wraps
// ErrInvalidArgument. Data may hold any bytes (see EncodeText).
//
// Writers of the same turn are serialised until they commit, so a reader
// that has seen an event of a turn has also seen every earlier one:
// following a turn by ID never skips an event, even with several writers.
func (s *Store) AppendEvents(ctx context.Context, evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	rows := make([]Event, len(evs))
	stamp := now()
	for i, ev := range evs {
		if err := checkEvent(ev); err != nil {
			return fmt.Errorf("models: append event %d: %w", i, err)
		}
		ev.ID = 0
		if ev.At.IsZero() {
			ev.At = stamp
		} else {
			ev.At = ev.At.UTC().Truncate(time.Microsecond)
		}
		rows[i] = ev
	}

	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return s.insertEvents(tx, rows)
	})
	if err != nil {
		return fmt.Errorf("models: append %d events of turn %q: %w", len(evs), evs[0].TurnID, err)
	}
	s.stored(ctx, rows)
	return nil
}

// AppendEventUnlessRepeated stores ev, as AppendEvents does, unless the
// last stored event of its turn has the same Kind and Data; it reports
// whether it stored ev. The check and the insert are one transaction under
// the turn's writer lock, so two writers of the same event store it once.
// It is for an event written by a step that may run again after it wrote
// (a retried activity): the second run finds its own event last and stores
// nothing.
func (s *Store) AppendEventUnlessRepeated(ctx context.Context, ev Event) (bool, error) {
	if err := checkEvent(ev); err != nil {
		return false, fmt.Errorf("models: append event: %w", err)
	}
	ev.ID = 0
	if ev.At.IsZero() {
		ev.At = now()
	} else {
		ev.At = ev.At.UTC().Truncate(time.Microsecond)
	}
	stored := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.lockEventTurns(tx, []Event{ev}); err != nil {
			return fmt.Errorf("lock turns: %w", err)
		}
		var last []Event
		if err := tx.Where("turn_id = ?", ev.TurnID).Order("id DESC").Limit(1).Find(&last).Error; err != nil {
			return fmt.Errorf("last event: %w", err)
		}
		if len(last) == 1 && last[0].Kind == ev.Kind && last[0].Data == ev.Data {
			return nil
		}
		if err := tx.Create(&ev).Error; err != nil {
			return fmt.Errorf("insert event: %w", err)
		}
		stored = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("models: append event of turn %q: %w", ev.TurnID, err)
	}
	if stored {
		s.stored(ctx, []Event{ev})
	}
	return stored, nil
}

// insertEvents locks the turns of rows and inserts rows, within tx. Rows
// of a model call's attempt that a later attempt superseded are refused,
// all of them (ErrSuperseded).
func (s *Store) insertEvents(tx *gorm.DB, rows []Event) error {
	if err := s.lockEventTurns(tx, rows); err != nil {
		return fmt.Errorf("lock turns: %w", err)
	}
	if err := superseded(tx, rows); err != nil {
		return err
	}
	for start := 0; start < len(rows); start += eventInsertBatch {
		chunk := rows[start:min(start+eventInsertBatch, len(rows))]
		if err := tx.Create(&chunk).Error; err != nil {
			return fmt.Errorf("insert events %d..%d: %w", start, start+len(chunk)-1, err)
		}
	}
	return nil
}

// superseded fails with ErrSuperseded when the store holds the beginning
// of an attempt later than one of rows' (a later attempt of its call, or
// an attempt of a later call of the turn), within tx under the turn's lock.
func superseded(tx *gorm.DB, rows []Event) error {
	var last Event
	for _, ev := range rows {
		if ev.Attempt == 0 || (ev.TurnID == last.TurnID && ev.ModelCall == last.ModelCall && ev.Attempt == last.Attempt) {
			continue
		}
		last = ev
		var n int64
		err := tx.Model(&Event{}).Where("turn_id = ? AND kind = ? AND (model_call > ? OR (model_call = ? AND attempt > ?))",
			ev.TurnID, KindAttempt, ev.ModelCall, ev.ModelCall, ev.Attempt).Limit(1).Count(&n).Error
		if err != nil {
			return fmt.Errorf("look for a later attempt: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("%w: call %d, attempt %d of turn %q", ErrSuperseded, ev.ModelCall, ev.Attempt, ev.TurnID)
		}
	}
	return nil
}

// checkEvent rejects an event that either database would refuse, so that
// both refuse the same input.
func checkEvent(ev Event) error {
	if err := checkID("turn ID", ev.TurnID, maxTurnIDLen); err != nil {
		return err
	}
	if ev.Kind == "" {
		return fmt.Errorf("%w: empty event kind", ErrInvalidArgument)
	}
	if utf8.RuneCountInString(ev.Kind) > MaxEventKindLen {
		return fmt.Errorf("%w: event kind longer than %d characters", ErrInvalidArgument, MaxEventKindLen)
	}
	return nil
}

// lockEventTurns makes concurrent writers of the same turns wait for each
// other until commit, so that the IDs of a turn's events become visible in
// increasing order. SQLite needs nothing: its write transactions take the
// database's write lock when they begin (_txlock=immediate). On PostgreSQL
// the sequence hands out IDs before commit, so a transaction-scoped
// advisory lock per turn is taken, in sorted order to avoid deadlocks.
func (s *Store) lockEventTurns(tx *gorm.DB, evs []Event) error {
	if s.dialect.name() != "postgres" {
		return nil
	}
	turns := make([]string, 0, 1)
	for _, ev := range evs {
		turns = append(turns, ev.TurnID)
	}
	slices.Sort(turns)
	for _, turn := range slices.Compact(turns) {
		if err := tx.Exec("SELECT pg_advisory_xact_lock(?, hashtext(?))", eventLockClass, turn).Error; err != nil {
			return fmt.Errorf("turn %q: %w", turn, err)
		}
	}
	return nil
}

// EventsAfter returns the events of a turn whose ID is greater than afterID,
// in ascending ID order, at most limit of them (DefaultEventsLimit when
// limit is not positive). None is not an error.
func (s *Store) EventsAfter(ctx context.Context, turnID string, afterID int64, limit int) ([]Event, error) {
	if err := checkID("turn ID", turnID, maxTurnIDLen); err != nil {
		return nil, fmt.Errorf("models: events after %d: %w", afterID, err)
	}
	if limit <= 0 {
		limit = DefaultEventsLimit
	}
	evs := []Event{}
	err := s.db.WithContext(ctx).
		Where("turn_id = ? AND id > ?", turnID, afterID).
		Order("id").Limit(limit).Find(&evs).Error
	if err != nil {
		return nil, fmt.Errorf("models: events of turn %q after %d: %w", turnID, afterID, err)
	}
	return evs, nil
}
