package api

import (
	"net/http"
	"strings"
)

// handlerFunc is a route: it writes its answer, or returns the error to
// answer in the JSON error shape.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// routes builds the API's mux. Every route but the public ones (health,
// and the web page's static files, which hold no data) asks for the key.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, h handlerFunc) {
		s.patterns = append(s.patterns, pattern)
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := h(w, r); err != nil {
				s.writeError(w, r, err)
			}
		})
	}
	handle("GET /health", s.handleHealth)
	handle("GET /openapi.json", s.handleOpenAPI)

	handle("GET /v1/models", s.handleModels)
	handle("GET /v1/capabilities", s.handleCapabilities)
	handle("POST /v1/chat/completions", s.handleChat)
	handle("POST /v1/responses", s.handleResponses)

	handle("POST /v1/runs", s.handleStartRun)
	handle("GET /v1/runs/{id}", s.handleGetRun)
	handle("GET /v1/runs/{id}/events", s.handleRunEvents)
	handle("POST /v1/runs/{id}/stop", s.handleStopRun)
	handle("POST /v1/runs/{id}/steer", s.handleSteerRun)
	handle("POST /v1/runs/{id}/approval", s.handleApproveRun)
	handle("POST /v1/runs/{id}/answer", s.handleAnswerRun)

	s.sessionRoutes(handle)
	s.memoryRoutes(handle)
	s.jobRoutes(handle)
	s.pageRoutes(mux)
	if s.hooks != nil {
		s.patterns = append(s.patterns, "POST /webhooks/{platform}")
		mux.Handle("/webhooks/", s.hooks)
	}

	return s.guard(s.public, jsonFallback(mux))
}

// public reports whether r may come without the key: the health check and
// the web page's files (the page asks for the key and keeps it).
func (s *Server) public(r *http.Request) bool {
	if s.hooks != nil && strings.HasPrefix(r.URL.Path, "/webhooks/") {
		return true // a platform's signature lets it in, not the key
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	return r.URL.Path == "/health" || isPagePath(r.URL.Path)
}

// handleHealth answers GET /health without a key: the process answers.
func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) error {
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// jsonFallback answers, in the JSON error shape, what mux would answer in
// plain text: an unknown path (404) or a method the path does not take
// (405, with Allow).
func jsonFallback(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// The mux's own answer, for its status and Allow only.
		rec := &headerOnly{header: http.Header{}, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		e := notFound("no route %s %s (GET /openapi.json lists them)", r.Method, oneLine(r.URL.Path))
		if status := rec.code; status == http.StatusMethodNotAllowed {
			allow := rec.header.Get("Allow")
			w.Header().Set("Allow", allow)
			e = errorf(status, typeInvalidRequest, "method_not_allowed", "%s does not take %s (allowed: %s)", oneLine(r.URL.Path), r.Method, allow)
		}
		writeJSON(w, e.status, errorBody{Error: e})
	})
}

// headerOnly keeps an answer's status and headers and drops its body.
type headerOnly struct {
	header http.Header
	code   int
}

func (h *headerOnly) Header() http.Header         { return h.header }
func (h *headerOnly) Write(b []byte) (int, error) { return len(b), nil }
func (h *headerOnly) WriteHeader(code int)        { h.code = code }
