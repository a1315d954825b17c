package api

import (
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

// followEvents sends fn the events of turnID after afterID, in order,
// until the turn's done event (sent too), the client going away or fn
// failing. While nothing comes, it sends keep-alive comments; when the
// turn has ended but its done event is gone (pruned with its events), it
// makes one from the stored turn.
func (s *Server) followEvents(ctx context.Context, turnID string, afterID int64, sse *sseWriter, fn func(eventOut) error) error {
	idle := time.Now()
	lastCheck := time.Now()
	for {
		evs, err := s.rt.Store.EventsAfter(ctx, turnID, afterID, models.DefaultEventsLimit)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			s.logger.Debug("api: read events, retrying", "turn", turnID, "error", err)
		}
		for _, ev := range evs {
			out := eventOf(ev)
			if err := fn(out); err != nil {
				return err
			}
			afterID = ev.ID
			if ev.Kind == events.KindDone {
				return nil
			}
		}
		if len(evs) > 0 {
			idle = time.Now()
			if len(evs) >= models.DefaultEventsLimit {
				continue
			}
		}
		if time.Since(idle) >= keepAlive {
			if err := sse.comment("keep-alive"); err != nil {
				return err
			}
			idle = time.Now()
		}
		if time.Since(lastCheck) >= time.Second {
			lastCheck = time.Now()
			if reason, ended := s.turnEnded(ctx, turnID); ended {
				// Ended: one more read for a done written meanwhile.
				if more, err := s.rt.Store.EventsAfter(ctx, turnID, afterID, 1); err == nil && len(more) == 0 {
					return fn(eventOut{Kind: events.KindDone, text: reason})
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.eventPoll):
		}
	}
}

// turnEnded reports whether a turn has ended, and why: as the store
// recorded it, or, for a turn whose workflow closed without recording its
// end (terminated, failed before its last step), as Temporal says.
func (s *Server) turnEnded(ctx context.Context, turnID string) (string, bool) {
	t, err := s.rt.Store.Turn(ctx, turnID)
	if err == nil && t.EndedAt != nil && t.ExitReason != "" {
		return t.ExitReason, true
	}
	if status, closed := s.workflowClosed(ctx, turnID); closed {
		return status, true
	}
	return "", false
}

// workflowClosed reports whether the turn's workflow has closed other than
// by continuing as new, with its status in lower case ("terminated").
func (s *Server) workflowClosed(ctx context.Context, turnID string) (string, bool) {
	d, err := s.rt.Client.DescribeWorkflowExecution(ctx, turnID, "")
	if err != nil || d.GetWorkflowExecutionInfo() == nil {
		return "", false
	}
	return closedStatus(d.GetWorkflowExecutionInfo().GetStatus())
}

// lastEventID is where a client resumes: the Last-Event-ID header, else
// the after query parameter; 0 from the start.
func lastEventID(r *http.Request) (int64, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest("invalid_last_event_id", "Last-Event-ID %q is not an event id", oneLine(v))
	}
	return n, nil
}
