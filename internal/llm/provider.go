package llm

import (
	"errors"
	"mime"
	"net/http"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// headerRecorder is an openai.HTTPDoer that keeps what go-openai does not
// expose about the last response: its status, Retry-After header, content
// type and a watch over its body (the first bytes, the end of the stream,
// a transport failure). A 2xx answer that is an HTML page is refused here,
// before go-openai tries to decode it.
type headerRecorder struct {
	base http.Client

	mu          sync.Mutex
	status      int
	retryAfter  string
	contentType string
	body        *bodyWatch
}

// errNotProtocol is returned by Do for a successful status whose content
// type says it is not an API answer (an HTML error page).
var errNotProtocol = errors.New("it is an HTML page")

func (h *headerRecorder) Do(req *http.Request) (*http.Response, error) {
	resp, err := h.base.Do(req)
	if resp == nil {
		return resp, err
	}
	watch := newBodyWatch(resp.Body)
	resp.Body = watch
	h.mu.Lock()
	h.status = resp.StatusCode
	h.retryAfter = resp.Header.Get("Retry-After")
	h.contentType = resp.Header.Get("Content-Type")
	h.body = watch
	h.mu.Unlock()
	if err == nil && resp.StatusCode/100 == 2 && isHTML(resp.Header.Get("Content-Type")) {
		watch.fill()
		_ = resp.Body.Close()
		return nil, errNotProtocol
	}
	return resp, err
}

// response is what the recorder knows about the last response.
type response struct {
	status      int
	retryAfter  string
	contentType string
	body        bodyState
}

func (h *headerRecorder) last() response {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := response{status: h.status, retryAfter: h.retryAfter, contentType: h.contentType}
	if h.body != nil {
		r.body = h.body.state()
	}
	return r
}

// isHTML reports whether a Content-Type names an HTML document.
func isHTML(contentType string) bool {
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return strings.Contains(strings.ToLower(contentType), "html")
	}
	return media == "text/html" || media == "application/xhtml+xml"
}

// newClient builds a go-openai client for one call, recording headers.
func newClient(p Endpoint, transport http.RoundTripper) (*openai.Client, *headerRecorder) {
	cfg := openai.DefaultConfig(p.APIKey)
	if p.BaseURL != "" {
		cfg.BaseURL = strings.TrimRight(p.BaseURL, "/")
	}
	rec := &headerRecorder{base: http.Client{Transport: transport}}
	cfg.HTTPClient = rec
	return openai.NewClientWithConfig(cfg), rec
}
