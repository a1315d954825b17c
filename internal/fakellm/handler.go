package fakellm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// maxBodyBytes bounds the size of a request body the server accepts.
const maxBodyBytes = 64 << 20

// serveHTTP routes every request of the server.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		writeAPIError(w, apiError{status: http.StatusServiceUnavailable, message: "fakellm: server is closing", typ: "server_error"})
		return
	}
	defer s.handlers.Done()

	if f, ok := s.formats[r.URL.Path]; ok {
		if r.Method != http.MethodPost {
			writeMethodNotAllowed(w, r, http.MethodPost)
			return
		}
		s.handleChat(w, r, f)
		return
	}
	switch path := r.URL.Path; {
	case s.serveExtra(w, r):
	case path == "/v1/models":
		if r.Method != http.MethodGet {
			writeMethodNotAllowed(w, r, http.MethodGet)
			return
		}
		s.handleModels(w, r, "")
	case strings.HasPrefix(path, "/v1/models/"):
		if r.Method != http.MethodGet {
			writeMethodNotAllowed(w, r, http.MethodGet)
			return
		}
		s.handleModels(w, r, strings.TrimPrefix(path, "/v1/models/"))
	default:
		writeAPIError(w, apiError{
			status:  http.StatusNotFound,
			message: fmt.Sprintf("fakellm: unknown endpoint %s %s", r.Method, path),
			typ:     "invalid_request_error",
			code:    "unknown_url",
		})
	}
}

func writeMethodNotAllowed(w http.ResponseWriter, r *http.Request, allowed string) {
	w.Header().Set("Allow", allowed)
	writeAPIError(w, apiError{
		status:  http.StatusMethodNotAllowed,
		message: fmt.Sprintf("fakellm: method %s not allowed on %s", r.Method, r.URL.Path),
		typ:     "invalid_request_error",
	})
}

// authorized reports whether the request carries the configured API key.
// The model list takes the key as any of the formats sends it.
func (s *Server) authorized(r *http.Request) bool {
	return s.apiKey == "" || r.Header.Get("Authorization") == "Bearer "+s.apiKey || r.Header.Get("X-Api-Key") == s.apiKey
}

var errUnauthorized = apiError{
	status:  http.StatusUnauthorized,
	message: "fakellm: incorrect API key provided",
	typ:     "invalid_request_error",
	code:    "invalid_api_key",
}

// handleModels answers GET /v1/models (id == "") and GET /v1/models/{id}.
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request, id string) {
	if !s.authorized(r) {
		writeAPIError(w, errUnauthorized)
		return
	}
	list := wireEntries{Object: "list", Data: make([]any, 0, len(s.models))}
	for _, name := range s.models {
		m := s.modelEntry(wireModel{ID: name, Object: "model", Created: 1700000000, OwnedBy: "fakellm"})
		if id == name {
			writeJSON(w, http.StatusOK, m)
			return
		}
		list.Data = append(list.Data, m)
	}
	if id != "" {
		writeAPIError(w, apiError{
			status:  http.StatusNotFound,
			message: fmt.Sprintf("fakellm: the model %q does not exist", id),
			typ:     "invalid_request_error",
			code:    "model_not_found",
		})
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// handleChat records a model request in format f, picks its step and
// serves it.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request, f format) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		f.writeError(w, apiError{
			status:  http.StatusBadRequest,
			message: fmt.Sprintf("fakellm: reading request body: %v", err),
			typ:     "invalid_request_error",
		})
		return
	}
	rec := &Request{Wire: f.wire(), Raw: raw, Header: r.Header.Clone(), Query: r.URL.Query(), Received: time.Now()}
	in, decodeErr := f.decode(raw)
	rec.Body = in.chat

	var (
		st        Step
		reject    *apiError
		responder Responder
	)
	s.mu.Lock()
	rec.Index = len(s.requests)
	s.requests = append(s.requests, rec)
	switch {
	case !f.authorized(r, s.apiKey):
		reject = &errUnauthorized
	case headerError(f, r.Header) != nil:
		reject = headerError(f, r.Header)
	case decodeErr != nil:
		reject = &apiError{
			status:  http.StatusBadRequest,
			message: fmt.Sprintf("fakellm: request body is not a valid %s request: %v", f.wire(), decodeErr),
			typ:     "invalid_request_error",
		}
	case len(s.script) > 0:
		st = s.script[0]
		s.script = s.script[1:]
		rec.Scripted = true
	case s.responder != nil:
		responder = s.responder
	default:
		rec.Exhausted = true
		reject = &apiError{
			status:  http.StatusInternalServerError,
			message: fmt.Sprintf("fakellm: script exhausted: no step left for request #%d and no responder set", rec.Index),
			typ:     "server_error",
			code:    "script_exhausted",
		}
	}
	if reject != nil {
		rec.Status = reject.status
	}
	var snapshot Request
	if s.forget {
		// The snapshot takes the request over: the record keeps none of it.
		snapshot = *rec
		rec.Raw, rec.Body, rec.Header, rec.Query = nil, openai.ChatCompletionRequest{}, nil, nil
	} else {
		snapshot = rec.clone()
	}
	s.notifyLocked()
	s.mu.Unlock()

	cancelled, broken := false, false
	defer func() {
		s.update(rec, func(r *Request) {
			r.Cancelled = cancelled
			r.Broken = broken
			r.Finished = time.Now()
		})
	}()

	if reject != nil {
		f.writeError(w, *reject)
		return
	}
	if responder != nil {
		st = responder(snapshot)
	}
	status := st.Status
	if status == 0 {
		status = http.StatusOK
	}
	if status < 200 || status > 599 {
		s.update(rec, func(r *Request) { r.Status = http.StatusInternalServerError })
		f.writeError(w, apiError{
			status:  http.StatusInternalServerError,
			message: fmt.Sprintf("fakellm: invalid scripted status %d for request #%d", st.Status, rec.Index),
			typ:     "server_error",
			code:    "invalid_step",
		})
		return
	}
	s.update(rec, func(r *Request) { r.Status = status })

	p := s.plan(snapshot, st, status, in)
	cancelled, broken = s.serveStep(r.Context(), w, p, f)
}

// plan is everything needed to write the answer of one step.
type plan struct {
	step         Step
	status       int
	id           string
	model        string
	created      int64
	received     time.Time
	calls        []ToolCall // with ids and arguments defaulted
	finish       string
	usage        openai.Usage
	stream       bool
	includeUsage bool
	// native is the format's own reading of the request (decoded.native).
	native any
}

// plan resolves the defaults of a step for a request.
func (s *Server) plan(req Request, st Step, status int, in decoded) plan {
	p := plan{
		step:         st,
		status:       status,
		model:        req.Body.Model,
		created:      req.Received.Unix(),
		received:     req.Received,
		finish:       st.finishReason(),
		stream:       in.stream,
		includeUsage: in.includeUsage,
		native:       in.native,
	}
	if p.model == "" {
		p.model = s.models[0]
	}
	s.mu.Lock()
	p.id = "chatcmpl-fake-" + strconv.Itoa(s.nextIDLocked())
	p.calls = make([]ToolCall, len(st.ToolCalls))
	for i, c := range st.ToolCalls {
		if c.ID == "" {
			c.ID = "call_" + strconv.Itoa(s.nextIDLocked())
		}
		if c.Arguments == "" {
			c.Arguments = "{}"
		}
		p.calls[i] = c
	}
	s.mu.Unlock()
	p.usage = usageFor(req.Raw, st, p.calls)
	return p
}

// serveStep waits, hangs or writes the answer of a step. It reports whether
// the client went away before the answer was complete and whether the
// answer was deliberately broken.
func (s *Server) serveStep(ctx context.Context, w http.ResponseWriter, p plan, f format) (cancelled, broken bool) {
	st := p.step
	if st.Delay > 0 {
		if why := s.sleep(ctx, st.Delay); why != wakeTimer {
			return abandon(why, w), false
		}
	}
	if st.Hang {
		return abandon(s.waitGone(ctx), w), false
	}
	if ctx.Err() != nil {
		return true, false
	}
	w.Header().Set("X-Request-Id", p.id)
	if st.Body != "" {
		return writeRaw(w, p)
	}
	if st.isError() {
		f.writeError(w, stepError(st))
		return false, false
	}
	if p.stream {
		events, err := f.events(p)
		if err != nil {
			http.Error(w, "fakellm: "+err.Error(), http.StatusInternalServerError)
			return false, false
		}
		return s.writeStream(ctx, w, p, events, streamsNDJSON(f))
	}
	body, err := f.body(p)
	if err != nil {
		http.Error(w, "fakellm: encoding answer: "+err.Error(), http.StatusInternalServerError)
		return false, false
	}
	return writeCompletion(w, p, body)
}

// wake tells why a wait ended.
type wake int

const (
	wakeTimer  wake = iota // the wait elapsed
	wakeClient             // the client went away
	wakeClosed             // the server is closing
)

// sleep waits for d, or until the client goes away or the server closes.
func (s *Server) sleep(ctx context.Context, d time.Duration) wake {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return wakeTimer
	case <-ctx.Done():
		return wakeClient
	case <-s.done:
		return wakeClosed
	}
}

// waitGone waits until the client goes away or the server closes.
func (s *Server) waitGone(ctx context.Context) wake {
	select {
	case <-ctx.Done():
		return wakeClient
	case <-s.done:
		return wakeClosed
	}
}

// abandon ends a handler whose wait was cut short: by the client going away
// (it reports true) or by the server closing, in which case the connection
// is dropped so that the client never mistakes the unfinished answer for a
// complete one.
func abandon(why wake, w http.ResponseWriter) (cancelled bool) {
	if why == wakeClient {
		return true
	}
	breakConnection(w)
	return false
}

// breakConnection drops the connection under a response without finishing
// it, so the client sees a truncated body (or no answer at all when nothing
// was written yet). Callers flush what they want the client to get first.
func breakConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Connections that cannot be hijacked are aborted the way net/http
		// documents for handlers: the server closes them without finishing
		// the response.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}
