package fakellm

import (
	"encoding/json"
	"net/http"
	"sync"
)

// This file makes the fake an embeddings server too: POST /v1/embeddings
// as OpenAI serves it ({"model", "input": a string or a list of them});
// the answer is {"data": [{"embedding": [...], "index": i}], "model",
// "usage"}.

// Embedder is the vector the fake gives a text.
type Embedder func(text string) []float32

// WithEmbedder sets what the embeddings endpoint answers. Without it, every
// text's vector is [1, 0, 0].
func WithEmbedder(e Embedder) Option {
	return optionFunc(func(c *config) { c.extra.embed = e })
}

// embedded are the texts the embeddings endpoint was asked about.
type embedded struct {
	mu  sync.Mutex
	got []string
}

// Embedded are the texts the embeddings endpoint was asked about, in order.
func (s *Server) Embedded() []string {
	s.extra.embedded.mu.Lock()
	defer s.extra.embedded.mu.Unlock()
	return append([]string(nil), s.extra.embedded.got...)
}

// handleEmbeddings answers POST /v1/embeddings.
func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeMethodNotAllowed(w, r, http.MethodPost)
		return
	}
	if !s.authorized(r) {
		writeAPIError(w, errUnauthorized)
		return
	}
	var in struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	bad := func(msg string) {
		writeAPIError(w, apiError{status: http.StatusBadRequest, message: "fakellm: " + msg, typ: "invalid_request_error"})
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes)).Decode(&in); err != nil {
		bad("read the body: " + err.Error())
		return
	}
	var texts []string
	if err := json.Unmarshal(in.Input, &texts); err != nil {
		var one string
		if err := json.Unmarshal(in.Input, &one); err != nil {
			bad(`"input" must be a string or a list of strings`)
			return
		}
		texts = []string{one}
	}
	if in.Model == "" || len(texts) == 0 {
		bad(`the body needs "model" and "input"`)
		return
	}
	s.extra.embedded.mu.Lock()
	s.extra.embedded.got = append(s.extra.embedded.got, texts...)
	s.extra.embedded.mu.Unlock()
	data := make([]map[string]any, len(texts))
	for i, t := range texts {
		v := []float32{1, 0, 0}
		if s.extra.embed != nil {
			v = s.extra.embed(t)
		}
		data[i] = map[string]any{"object": "embedding", "embedding": v, "index": i}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "data": data, "model": in.Model,
		"usage": map[string]any{"prompt_tokens": len(texts), "total_tokens": len(texts)},
	})
}
