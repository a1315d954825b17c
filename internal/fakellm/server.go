package fakellm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// Responder decides the answer to a request when the script is exhausted,
// e.g. "always call a tool" or "echo the last message". It is called
// concurrently, without the server's lock held, and must treat req as
// read-only.
type Responder func(req Request) Step

// ErrClosed is returned by the wait methods when the server is closed first.
var ErrClosed = errors.New("fakellm: server closed")

// Server is a running fake OpenAI-compatible server. Create it with New or
// Start and Close it when done.
type Server struct {
	apiKey  string
	models  []string
	url     string
	formats map[string]format
	extra   extras

	srv       *http.Server
	serveDone chan struct{}
	done      chan struct{} // closed by Close: wakes hanging and delayed handlers
	closeOnce sync.Once
	handlers  sync.WaitGroup

	mu        sync.Mutex
	closed    bool
	script    []Step
	responder Responder
	forget    bool // WithoutRequestBodies
	requests  []*Request
	changed   chan struct{} // closed and replaced whenever requests change
	ids       int           // counter for generated ids
}

// New starts a server on 127.0.0.1 with a random port, like
// httptest.NewServer. It panics if no port can be opened; use Start to get
// the error instead.
func New(opts ...Option) *Server {
	s, err := Start(opts...)
	if err != nil {
		panic(err)
	}
	return s
}

// Start starts a server on 127.0.0.1 with a random port. It is listening
// when Start returns.
func Start(opts ...Option) (*Server, error) {
	var c config
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if len(c.models) == 0 {
		c.models = []string{DefaultModel}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakellm: listen: %w", err)
	}
	s := &Server{
		apiKey:    c.apiKey,
		models:    c.models,
		formats:   newFormats(),
		url:       "http://" + ln.Addr().String() + "/v1",
		serveDone: make(chan struct{}),
		done:      make(chan struct{}),
		script:    c.steps,
		responder: c.responder,
		forget:    c.forgetBodies,
		changed:   make(chan struct{}),
		extra:     c.extra,
	}
	s.extra.hits = &hitCounter{}
	s.extra.heard = &transcriptions{}
	s.extra.embedded = &embedded{}
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() {
		defer close(s.serveDone)
		_ = s.srv.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	return s, nil
}

// URL returns the base URL to give a client (go-openai's ClientConfig.BaseURL
// or OPENAI_BASE_URL), e.g. "http://127.0.0.1:41234/v1".
func (s *Server) URL() string { return s.url }

// Push appends steps to the script.
func (s *Server) Push(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, steps...)
}

// SetResponder sets the Responder used once the script is exhausted; nil
// restores the default "script exhausted" HTTP 500.
func (s *Server) SetResponder(r Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responder = r
}

// Remaining returns how many scripted steps have not been consumed yet.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Models returns the model names the server lists.
func (s *Server) Models() []string {
	return append([]string(nil), s.models...)
}

// Requests returns a snapshot of every chat completion request so far, in
// arrival order. Raw and Header are copies; the slices and maps inside Body
// are shared with the server's record and must be treated as read-only.
// Under WithoutRequestBodies, Raw, Header, Query and Body are empty.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = r.clone()
	}
	return out
}

// WaitRequests blocks until at least n chat completion requests have
// arrived, ctx is done (its error is returned, wrapped) or the server is
// closed (ErrClosed).
func (s *Server) WaitRequests(ctx context.Context, n int) error {
	return s.waitFor(ctx, n, func(r *Request) bool { return true }, "arrived")
}

// WaitFinished blocks until at least n chat completion requests have been
// completely handled (answered, failed, broken or abandoned by the client),
// ctx is done or the server is closed. After it returns nil the Cancelled
// flags of those requests are final.
func (s *Server) WaitFinished(ctx context.Context, n int) error {
	return s.waitFor(ctx, n, func(r *Request) bool { return !r.Finished.IsZero() }, "finished")
}

func (s *Server) waitFor(ctx context.Context, n int, match func(*Request) bool, what string) error {
	for {
		s.mu.Lock()
		count := 0
		for _, r := range s.requests {
			if match(r) {
				count++
			}
		}
		changed := s.changed
		s.mu.Unlock()
		if count >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("fakellm: waiting for %d requests %s (have %d): %w", n, what, count, ctx.Err())
		case <-s.done:
			return fmt.Errorf("fakellm: waiting for %d requests %s (have %d): %w", n, what, count, ErrClosed)
		}
	}
}

// Close stops the server: hanging, delayed and stalled handlers return
// (their clients see a dropped connection), open connections are closed,
// and Close waits until every handler has returned, so a Responder must not
// block forever. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.done)
		_ = s.srv.Close()
		s.handlers.Wait()
		<-s.serveDone
	})
}

// enter registers a running handler; it returns false once the server is
// closing.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.handlers.Add(1)
	return true
}

// notifyLocked wakes the waiters; s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// nextIDLocked returns a fresh number for generated ids; s.mu must be held.
func (s *Server) nextIDLocked() int {
	s.ids++
	return s.ids
}

// update applies f to the stored record of a request under the lock and
// wakes the waiters.
func (s *Server) update(rec *Request, f func(r *Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(rec)
	s.notifyLocked()
}
