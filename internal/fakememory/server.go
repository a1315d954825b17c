// Package fakememory is the test stand-in for the external memory
// services this machine cannot reach: Honcho (its v3 API), Mem0 (its
// platform API) and Supermemory (its v3/v4 API). Each fake is one HTTP
// server speaking the service's documented routes, request and answer
// shapes and auth header (Honcho and Supermemory a bearer key, Mem0
// "Token <key>"), refusing a wrong key with 401 as the service does. It
// keeps what it is sent, so what a client adds it finds again; its search
// is a plain word match, scored by the share of the query's words a text
// holds. Every request is recorded with its auth header and body. A fake
// can be made slow (Stall: every request waits until its client gives up)
// or down (Close).
package fakememory

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Request is a request a fake received.
type Request struct {
	Method, Path, RawQuery string
	// Auth is its Authorization header.
	Auth string
	Body []byte
}

// JSON decodes the request's body into v.
func (r Request) JSON(v any) error { return json.Unmarshal(r.Body, v) }

// server is what the three fakes share: the HTTP server, the key, the
// record of requests and the stall.
type server struct {
	srv    *httptest.Server
	scheme string
	key    string

	mu     sync.Mutex
	reqs   []Request
	stall  bool
	closed chan struct{}
}

// maxBody bounds a request body a fake reads.
const maxBody = 4 << 20

func (s *server) start(scheme, key string, mux *http.ServeMux) {
	s.scheme, s.key, s.closed = scheme, key, make(chan struct{})
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		s.mu.Lock()
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Auth: r.Header.Get("Authorization"), Body: body})
		stall := s.stall
		s.mu.Unlock()
		if stall {
			select {
			case <-r.Context().Done():
			case <-s.closed:
			}
			return
		}
		if r.Header.Get("Authorization") != s.scheme+" "+s.key {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "Unauthorized", "details": "Invalid or missing API key"})
			return
		}
		mux.ServeHTTP(w, r)
	}))
}

// URL is the fake's base URL.
func (s *server) URL() string { return s.srv.URL }

// Close stops the fake: it is down from then on (a stalled request ends).
func (s *server) Close() {
	s.mu.Lock()
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	s.mu.Unlock()
	s.srv.Close()
}

// Stall makes the fake slow: every request from now on is left
// unanswered until its client gives up or the fake closes.
func (s *server) Stall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stall = true
}

// Requests are the requests received so far, in order.
func (s *server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// RequestsTo are the requests received for method and path.
func (s *server) RequestsTo(method, path string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// words are the distinct lower-case words of s.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// score is the share of query's words that text holds (0: none).
func score(query, text string) float64 {
	q := words(query)
	if len(q) == 0 {
		return 0
	}
	t := words(text)
	n := 0
	for _, w := range q {
		if slices.Contains(t, w) {
			n++
		}
	}
	return float64(n) / float64(len(q))
}

// ranked are the indexes of texts that match query, best first (ties in
// order), with their scores.
func ranked(query string, texts []string) ([]int, []float64) {
	type hit struct {
		i int
		s float64
	}
	var hits []hit
	for i, t := range texts {
		if sc := score(query, t); sc > 0 {
			hits = append(hits, hit{i, sc})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return 0
	})
	idx, sc := make([]int, len(hits)), make([]float64, len(hits))
	for k, h := range hits {
		idx[k], sc[k] = h.i, h.s
	}
	return idx, sc
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads r's JSON body into v, answering 422 (FastAPI's word) or
// 400 when it is not JSON.
func decode(w http.ResponseWriter, r *http.Request, status int, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		writeJSON(w, status, map[string]any{"detail": "invalid JSON body: " + err.Error()})
		return false
	}
	return true
}
