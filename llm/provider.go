package llm

import (
	"net/http"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// Provider is one OpenAI-compatible endpoint.
type Provider struct {
	BaseURL string
	APIKey  string
	Model   string
}

// headerRecorder is an openai.HTTPDoer that keeps the last response's
// status and Retry-After header, which go-openai does not expose.
type headerRecorder struct {
	base http.Client

	mu         sync.Mutex
	status     int
	retryAfter string
}

func (h *headerRecorder) Do(req *http.Request) (*http.Response, error) {
	resp, err := h.base.Do(req)
	if resp != nil {
		h.mu.Lock()
		h.status = resp.StatusCode
		h.retryAfter = resp.Header.Get("Retry-After")
		h.mu.Unlock()
	}
	return resp, err
}

func (h *headerRecorder) last() (int, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.status, h.retryAfter
}

// newClient builds a go-openai client for one call, recording headers.
func newClient(p Provider, transport http.RoundTripper) (*openai.Client, *headerRecorder) {
	cfg := openai.DefaultConfig(p.APIKey)
	if p.BaseURL != "" {
		cfg.BaseURL = strings.TrimRight(p.BaseURL, "/")
	}
	rec := &headerRecorder{base: http.Client{Transport: transport}}
	cfg.HTTPClient = rec
	return openai.NewClientWithConfig(cfg), rec
}
