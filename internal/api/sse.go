package api

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/models"
)

// eventPoll is how often an event stream looks for new events when the
// store cannot say when they come (it can: see models.Store.WatchEvents).
const eventPoll = 50 * time.Millisecond

// endCheckFirst and endCheckMax bound how long a stream waits, with no
// event, before it asks whether its turn ended without a done event (its
// workflow was terminated, or its events pruned): first after
// endCheckFirst of quiet, then twice as long each time up to endCheckMax.
// A turn that shows progress is never asked about.
const (
	endCheckFirst = 2 * time.Second
	endCheckMax   = 5 * time.Second
)

// keepAlive is how often an idle event stream sends a comment, so that
// proxies and clients do not take it for dead.
const keepAlive = 15 * time.Second

// sseWriter writes Server-Sent Events and flushes each.
type sseWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

// newSSE starts an event stream answer.
func newSSE(w http.ResponseWriter) (*sseWriter, error) {
	rc := http.NewResponseController(w)
	// An event stream lasts as long as its turn: no write deadline.
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: rc}
	return s, s.flush()
}

func (s *sseWriter) flush() error {
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// data writes an unnamed event holding v as JSON.
func (s *sseWriter) data(v any) error { return s.event("", "", v) }

// event writes one event: its name (empty: none), its id (empty: none)
// and v as JSON (a json.RawMessage as it is).
func (s *sseWriter) event(name, id string, v any) error {
	var b strings.Builder
	if id != "" {
		fmt.Fprintf(&b, "id: %s\n", id)
	}
	if name != "" {
		fmt.Fprintf(&b, "event: %s\n", name)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	fmt.Fprintf(&b, "data: %s\n\n", data)
	if _, err := io.WriteString(s.w, b.String()); err != nil {
		return err
	}
	return s.flush()
}

// comment writes a comment line (a keep-alive).
func (s *sseWriter) comment(text string) error {
	if _, err := fmt.Fprintf(s.w, ": %s\n\n", text); err != nil {
		return err
	}
	return s.flush()
}

// done writes OpenAI's end of stream.
func (s *sseWriter) done() error {
	if _, err := io.WriteString(s.w, "data: [DONE]\n\n"); err != nil {
		return err
	}
	return s.flush()
}

// eventOut is a stored event as a client reads it.
type eventOut struct {
	ID   int64
	Kind string
	// text is the event's text (streamed kinds, notices, a done's stop
	// reason); raw its JSON data (tool and approval kinds).
	text string
	raw  json.RawMessage
}

// payload is the event's data object: its JSON, or {"text": ...}; a done
// carries {"stop_reason": ...}.
func (e eventOut) payload() any {
	switch {
	case e.raw != nil:
		return e.raw
	case e.Kind == events.KindDone:
		return map[string]string{"stop_reason": e.text}
	}
	return map[string]string{"text": e.text}
}

// jsonKinds are the kinds whose data is a JSON object; the others are text.
var jsonKinds = map[string]bool{
	events.KindToolStart: true, events.KindToolEnd: true, events.KindApproval: true,
	events.KindApprovalDecided: true, events.KindQuestion: true, events.KindAnswered: true,
	events.KindAttempt: true,
}

// eventOf reads a stored event. The data of a JSON kind is passed on as
// it is; anything else is text. Pure.
func eventOf(ev models.Event) eventOut {
	out := eventOut{ID: ev.ID, Kind: ev.Kind, text: ev.Data}
	if d := strings.TrimSpace(ev.Data); jsonKinds[ev.Kind] && json.Valid([]byte(d)) {
		out.raw, out.text = json.RawMessage(d), ""
	}
	return out
}

// followEvents sends fn the events of turnID after afterID, in order (as
// events.Tail reads them), until the turn's done event (sent too), the
// client going away or fn failing. While nothing comes, it sends
// keep-alive comments; when the turn has ended but no done event follows
// (it was pruned with its events, or the workflow closed without one), it
// makes one from how the turn ended: it asks after a quiet while (see
// endCheckFirst), never while events come.
func (s *Server) followEvents(ctx context.Context, turnID string, afterID int64, sse *sseWriter, fn func(eventOut) error) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	tail := events.Tail(ctx, s.rt.Store, turnID, afterID, eventPoll)
	alive := time.NewTicker(keepAlive)
	defer alive.Stop()
	quiet := endCheckFirst
	check := time.NewTimer(quiet)
	defer check.Stop()
	for {
		select {
		case ev, ok := <-tail:
			if !ok {
				return ctx.Err()
			}
			alive.Reset(keepAlive)
			quiet = endCheckFirst
			check.Reset(quiet)
			if err := fn(eventOf(ev)); err != nil || ev.Kind == events.KindDone {
				return err
			}
			afterID = ev.ID
		case <-alive.C:
			if err := sse.comment("keep-alive"); err != nil {
				return err
			}
		case <-check.C:
			quiet = min(2*quiet, endCheckMax)
			check.Reset(quiet)
			t, err := s.turnOf(ctx, turnID, "")
			if err != nil || t.EndedAt == nil {
				continue
			}
			// Ended: the tail may still hold its last events.
			if more, err := s.rt.Store.EventsAfter(ctx, turnID, afterID, 1); err == nil && len(more) == 0 {
				return fn(eventOut{Kind: events.KindDone, text: t.ExitReason})
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// lastEventID is where a client resumes: the Last-Event-ID header, else
// the after query parameter; 0 from the start.
func lastEventID(r *http.Request) (int64, error) {
	v := cmp.Or(r.Header.Get("Last-Event-ID"), r.URL.Query().Get("after"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest("invalid_last_event_id", "Last-Event-ID %q is not an event id", oneLine(v))
	}
	return n, nil
}
