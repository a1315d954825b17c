package fakeslack

import (
	"context"
	"net/http"

	"github.com/talaria-agent/talaria/internal/fakewire"
)

// Ephemeral is a message the bot showed one user alone
// (chat.postEphemeral).
type Ephemeral struct {
	Channel, User, ThreadTS, Text string
}

// hold keeps the calls of a method unanswered: the first pass go on,
// the others wait until release closes.
type hold struct {
	method  string
	pass    int
	held    int
	release chan struct{}
}

// HoldAfter lets the next n calls of a Web API method through and holds
// the ones after them unanswered until Release. A held call whose client
// goes away (a process killed) is dropped: the fake never takes it, as
// if it was lost on the way. One method is held at a time.
func (s *Server) HoldAfter(method string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != nil {
		close(s.hold.release)
	}
	s.hold = &hold{method: method, pass: n, release: make(chan struct{})}
}

// Held is how many calls are held now.
func (s *Server) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold == nil {
		return 0
	}
	return s.hold.held
}

// WaitHeld waits until ok holds for the number of held calls, or ctx
// ends.
func (s *Server) WaitHeld(ctx context.Context, ok func(int) bool) (int, error) {
	return fakewire.Wait(ctx, s.Held, ok)
}

// Release ends the hold: the held calls go on, and later ones pass.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != nil {
		close(s.hold.release)
		s.hold = nil
	}
}

// admit holds a call of method when it is due to be held, and reports
// whether it goes on (false: its client went away meanwhile).
func (s *Server) admit(r *http.Request, method string) bool {
	s.mu.Lock()
	h := s.hold
	if h == nil || h.method != method {
		s.mu.Unlock()
		return true
	}
	if h.pass > 0 {
		h.pass--
		s.mu.Unlock()
		return true
	}
	h.held++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		h.held--
		s.mu.Unlock()
	}()
	select {
	case <-h.release:
		return true
	case <-r.Context().Done():
		return false
	}
}

// Ephemerals are the messages the bot showed single users, in order.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ephemeral(nil), s.ephemerals...)
}

// WaitEphemerals waits until ok holds for the ephemeral messages, or ctx
// ends.
func (s *Server) WaitEphemerals(ctx context.Context, ok func([]Ephemeral) bool) ([]Ephemeral, error) {
	return fakewire.Wait(ctx, s.Ephemerals, ok)
}

func (s *Server) postEphemeral(w http.ResponseWriter, p map[string]string) {
	if p["channel"] == "" {
		writeError(w, "channel_not_found")
		return
	}
	if p["user"] == "" {
		writeError(w, "user_not_in_channel")
		return
	}
	if p["text"] == "" && p["blocks"] == "" {
		writeError(w, "no_text")
		return
	}
	s.mu.Lock()
	s.ephemerals = append(s.ephemerals, Ephemeral{Channel: p["channel"], User: p["user"], ThreadTS: p["thread_ts"], Text: p["text"]})
	ts := s.tsLocked()
	s.mu.Unlock()
	writeOK(w, map[string]any{"message_ts": ts})
}

// EventID is the event_id of the Events API callback that carried the
// message with ts a user sent ("" when there is none): the id an app
// knows the event by.
func (s *Server) EventID(ts string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.events {
		ev, _ := e.payload["event"].(map[string]any)
		if e.kind == "events_api" && ev != nil && ev["ts"] == ts && ev["user"] != BotUserID && ev["type"] == "message" {
			id, _ := e.payload["event_id"].(string)
			return id
		}
	}
	return ""
}
