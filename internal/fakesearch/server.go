package fakesearch

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
)

// Hit is one result the fake returns, whatever the API.
type Hit struct{ Title, URL, Snippet string }

// Failure is an answer queued instead of results.
type Failure struct {
	Status     int
	Body       string
	RetryAfter string
}

// Request is what the fake received.
type Request struct {
	// API is searxng, brave, tavily or exa.
	API   string
	Query string
	// Limit is the count asked for (0 when none).
	Limit int
}

// Server is the fake search services.
type Server struct {
	srv *httptest.Server
	// Key is the key every keyed API expects.
	Key  string
	mu   sync.Mutex
	hits []Hit
	fail []Failure
	reqs []Request
}

// New starts the fake answering with hits; key is the API key it accepts.
func New(key string, hits ...Hit) *Server {
	s := &Server{Key: key, hits: hits}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the server's base address.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Fail queues a failure for the next request.
func (s *Server) Fail(f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = append(s.fail, f)
}

// Requests are the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	api, req, ok := s.read(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	var f *Failure
	if len(s.fail) > 0 {
		f, s.fail = &s.fail[0], s.fail[1:]
	}
	hits := append([]Hit(nil), s.hits...)
	s.mu.Unlock()
	if f != nil {
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.Status)
		_, _ = w.Write([]byte(f.Body))
		return
	}
	if req.Limit > 0 && len(hits) > req.Limit {
		hits = hits[:req.Limit]
	}
	writeJSON(w, http.StatusOK, answer(api, req.Query, hits))
}

// read recognises the API a request speaks and checks its key.
func (s *Server) read(w http.ResponseWriter, r *http.Request) (string, Request, bool) {
	refuse := func(status int, msg string) (string, Request, bool) {
		writeJSON(w, status, map[string]any{"error": msg})
		return "", Request{}, false
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/search":
		if r.URL.Query().Get("format") != "json" {
			return refuse(http.StatusForbidden, "format not allowed")
		}
		return "searxng", Request{API: "searxng", Query: r.URL.Query().Get("q")}, true
	case r.Method == http.MethodGet && r.URL.Path == "/res/v1/web/search":
		if r.Header.Get("X-Subscription-Token") != s.Key {
			return refuse(http.StatusUnauthorized, "invalid subscription token")
		}
		n, _ := strconv.Atoi(r.URL.Query().Get("count"))
		return "brave", Request{API: "brave", Query: r.URL.Query().Get("q"), Limit: n}, true
	case r.Method == http.MethodPost && r.URL.Path == "/search":
		var body struct {
			Query      string `json:"query"`
			MaxResults int    `json:"max_results"`
			NumResults int    `json:"numResults"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			return refuse(http.StatusBadRequest, "invalid JSON body")
		}
		if key := r.Header.Get("x-api-key"); key != "" || r.Header.Get("Authorization") == "" {
			if key != s.Key {
				return refuse(http.StatusUnauthorized, "invalid API key")
			}
			return "exa", Request{API: "exa", Query: body.Query, Limit: body.NumResults}, true
		}
		if strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") != s.Key {
			return refuse(http.StatusUnauthorized, "Unauthorized: missing or invalid API key.")
		}
		return "tavily", Request{API: "tavily", Query: body.Query, Limit: body.MaxResults}, true
	}
	return refuse(http.StatusNotFound, "not found")
}

// answer is hits in api's JSON shape.
func answer(api, query string, hits []Hit) any {
	var rows []map[string]any
	for _, h := range hits {
		switch api {
		case "searxng":
			rows = append(rows, map[string]any{"title": h.Title, "url": h.URL, "content": h.Snippet, "engine": "duckduckgo", "score": 1.0})
		case "brave":
			rows = append(rows, map[string]any{"title": h.Title, "url": h.URL, "description": "<strong>" + h.Snippet + "</strong>", "type": "search_result"})
		case "tavily":
			rows = append(rows, map[string]any{"title": h.Title, "url": h.URL, "content": h.Snippet, "score": 0.9})
		case "exa":
			rows = append(rows, map[string]any{"title": h.Title, "url": h.URL, "highlights": []string{h.Snippet}, "id": h.URL})
		}
	}
	switch api {
	case "brave":
		return map[string]any{"type": "search", "query": map[string]any{"original": query}, "web": map[string]any{"type": "search", "results": rows}}
	case "searxng":
		return map[string]any{"query": query, "number_of_results": len(rows), "results": rows}
	case "tavily":
		return map[string]any{"query": query, "results": rows, "response_time": 0.5}
	}
	return map[string]any{"requestId": "r1", "results": rows}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
