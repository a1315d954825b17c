package faketelegram

import (
	"context"
	"net/http"

	"github.com/talaria-agent/talaria/internal/fakewire"
)

// Answer is a bot's answer to a button press (answerCallbackQuery).
type Answer struct {
	// Update is the press's update id (Press returns it).
	Update     int64
	CallbackID string
	Text       string
}

// hold keeps the calls of a method unanswered: the first pass go on,
// the others wait until release closes.
type hold struct {
	method  string
	pass    int
	held    int
	release chan struct{}
}

// HoldAfter lets the next n calls of a Bot API method through and holds
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

// FailNext makes the next n calls of a Bot API method fail as Telegram
// fails a flood: HTTP 429 "Too Many Requests: retry after 1".
func (s *Server) FailNext(method string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext[method] += n
}

// failing reports whether this call of method is one to fail, counting
// it.
func (s *Server) failing(method string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failNext[method] <= 0 {
		return false
	}
	s.failNext[method]--
	return true
}

// Answers are the bot's answers to button presses, in order.
func (s *Server) Answers() []Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Answer(nil), s.answers...)
}

// WaitAnswers waits until ok holds for the answers, or ctx ends.
func (s *Server) WaitAnswers(ctx context.Context, ok func([]Answer) bool) ([]Answer, error) {
	return fakewire.Wait(ctx, s.Answers, ok)
}

func (s *Server) answerCallback(w http.ResponseWriter, p map[string]string) {
	s.mu.Lock()
	update, ok := s.callbacks[p["callback_query_id"]]
	if ok {
		s.answers = append(s.answers, Answer{Update: update, CallbackID: p["callback_query_id"], Text: p["text"]})
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusBadRequest, "Bad Request: query is too old and response timeout expired or query ID is invalid", 0)
		return
	}
	writeResult(w, true)
}
