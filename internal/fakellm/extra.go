package fakellm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// This file makes the fake the servers whose endpoints beside the model
// calls tell what a model is: an Ollama (POST /api/show), a router or an
// inference server whose GET /v1/models entries carry the model's window
// and prices (OpenRouter's context_length and pricing, vLLM's
// max_model_len, llama.cpp's meta), and llama.cpp's GET /props.

// extras is what the options of this file set.
type extras struct {
	// ollama serves POST /api/show; ollamaContext is the context length
	// its model_info reports (0: none), ollamaParams the Modelfile
	// parameters it lists, as "name value".
	ollama        bool
	ollamaContext int
	ollamaParams  []string
	// modelInfo are fields added to the model list's entries, by model
	// ("" for every model).
	modelInfo map[string]map[string]any
	// propsContext, when positive, serves GET /props with this n_ctx.
	propsContext int
	// hits counts the requests of these endpoints, by path.
	hits *hitCounter
	// transcribe answers the transcription endpoint (audio.go); heard
	// records its requests.
	transcribe Transcriber
	heard      *transcriptions
	// embed answers the embeddings endpoint (embeddings.go); embedded
	// records the texts it was asked about.
	embed    Embedder
	embedded *embedded
}

// hitCounter counts requests by path.
type hitCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *hitCounter) add(path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == nil {
		h.n = map[string]int{}
	}
	h.n[path]++
}

func (h *hitCounter) get(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[path]
}

// WithOllamaContext makes the server an Ollama too: POST /api/show
// answers for each listed model in Ollama's shape, its model_info naming
// the llama architecture with llama.context_length n (n <= 0: no context
// length). The model calls are served, with or without it, at Ollama's
// native POST /api/chat and at the OpenAI-compatible /v1 endpoints.
func WithOllamaContext(n int) Option {
	return optionFunc(func(c *config) { c.extra.ollama, c.extra.ollamaContext = true, n })
}

// WithOllamaParameter adds a Modelfile parameter (e.g. "num_ctx",
// "8192") to what POST /api/show reports, in its parameters text and its
// modelfile; it makes the server an Ollama as WithOllamaContext does.
func WithOllamaParameter(name, value string) Option {
	return optionFunc(func(c *config) {
		c.extra.ollama = true
		c.extra.ollamaParams = append(c.extra.ollamaParams, name+" "+value)
	})
}

// WithModelInfo adds fields to model's entry of GET /v1/models (and GET
// /v1/models/{id}); model "" adds them to every entry, a model's own
// fields win. For example {"context_length": 32768, "pricing":
// {"prompt": "0.000001", "completion": "0.000002"}} as OpenRouter lists,
// {"max_model_len": 32768} as vLLM does, or {"meta": {"n_ctx_train":
// 32768}} as llama.cpp does.
func WithModelInfo(model string, fields map[string]any) Option {
	return optionFunc(func(c *config) {
		if c.extra.modelInfo == nil {
			c.extra.modelInfo = map[string]map[string]any{}
		}
		if c.extra.modelInfo[model] == nil {
			c.extra.modelInfo[model] = map[string]any{}
		}
		for k, v := range fields {
			c.extra.modelInfo[model][k] = v
		}
	})
}

// WithLlamaCppProps makes GET /props answer as llama.cpp's server does,
// with default_generation_settings.n_ctx n.
func WithLlamaCppProps(n int) Option {
	return optionFunc(func(c *config) { c.extra.propsContext = n })
}

// ExtraRequests is how many requests the endpoints beside the model calls
// got at path ("/api/show", "/props", "/v1/models").
func (s *Server) ExtraRequests(path string) int {
	if s.extra.hits == nil {
		return 0
	}
	return s.extra.hits.get(path)
}

// serveExtra answers the endpoints beside the model calls that some
// servers have (Ollama's /api/show); false when r is not one of them.
func (s *Server) serveExtra(w http.ResponseWriter, r *http.Request) bool {
	switch path := r.URL.Path; {
	case path == "/v1/embeddings":
		s.extra.hits.add(path)
		s.handleEmbeddings(w, r)
		return true
	case path == "/v1/audio/transcriptions":
		s.extra.hits.add(path)
		s.handleTranscription(w, r)
		return true
	case path == "/api/show" && s.extra.ollama:
		s.extra.hits.add(path)
		if r.Method != http.MethodPost {
			writeOllamaError(w, http.StatusMethodNotAllowed, "method not allowed")
			return true
		}
		s.handleShow(w, r)
		return true
	case path == "/props" && s.extra.propsContext > 0:
		s.extra.hits.add(path)
		writeJSON(w, http.StatusOK, map[string]any{
			"default_generation_settings": map[string]any{"n_ctx": s.extra.propsContext, "params": map[string]any{}},
			"total_slots":                 1,
			"model_path":                  "/models/" + s.models[0] + ".gguf",
		})
		return true
	case strings.HasPrefix(path, "/v1/models"):
		s.extra.hits.add("/v1/models")
	}
	return false
}

// handleShow answers POST /api/show {"model": name} (older clients send
// "name") as Ollama does; a model the server does not list is 404.
func (s *Server) handleShow(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err == nil {
		err = json.Unmarshal(data, &in)
	}
	if err != nil {
		writeOllamaError(w, http.StatusBadRequest, "invalid request body: "+err.Error())
		return
	}
	name := in.Model
	if name == "" {
		name = in.Name
	}
	if !s.lists(name) {
		writeOllamaError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", name))
		return
	}
	writeJSON(w, http.StatusOK, s.showAnswer(name))
}

// lists reports whether the server lists name (Ollama's ":latest" tag may
// be left out).
func (s *Server) lists(name string) bool {
	for _, m := range s.models {
		if m == name || m == strings.TrimSuffix(name, ":latest") || m+":latest" == name {
			return true
		}
	}
	return false
}

// showAnswer is Ollama's /api/show answer for name.
func (s *Server) showAnswer(name string) map[string]any {
	info := map[string]any{
		"general.architecture":    "llama",
		"general.parameter_count": 8030261248,
		"general.file_type":       15,
		"llama.embedding_length":  4096,
		"llama.block_count":       32,
	}
	if s.extra.ollamaContext > 0 {
		info["llama.context_length"] = s.extra.ollamaContext
	}
	modelfile := fmt.Sprintf("# Modelfile generated by \"ollama show\"\nFROM /root/.ollama/models/blobs/sha256-%s\nTEMPLATE \"{{ .Prompt }}\"\n", strings.Repeat("0", 64))
	for _, p := range s.extra.ollamaParams {
		modelfile += "PARAMETER " + p + "\n"
	}
	params := make([]string, 0, len(s.extra.ollamaParams))
	for _, p := range s.extra.ollamaParams {
		k, v, _ := strings.Cut(p, " ")
		params = append(params, fmt.Sprintf("%-30s %s", k, v))
	}
	return map[string]any{
		"license":    "",
		"modelfile":  modelfile,
		"parameters": strings.Join(params, "\n"),
		"template":   "{{ .Prompt }}",
		"details": map[string]any{
			"parent_model": "", "format": "gguf", "family": "llama", "families": []string{"llama"},
			"parameter_size": "8.0B", "quantization_level": "Q4_K_M",
		},
		"model_info":   info,
		"capabilities": []string{"completion", "tools"},
		"modified_at":  "2025-01-01T00:00:00Z",
	}
}

// writeOllamaError writes Ollama's error body {"error": message}.
func writeOllamaError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]string{"error": message})
}

// wireEntries is the model list with entries that may carry more fields.
type wireEntries struct {
	Object string `json:"object"`
	Data   []any  `json:"data"`
}

// modelEntry is m as the model list shows it: with the fields WithModelInfo
// added for every model and for m's.
func (s *Server) modelEntry(m wireModel) any {
	all, own := s.extra.modelInfo[""], s.extra.modelInfo[m.ID]
	if len(all) == 0 && len(own) == 0 {
		return m
	}
	out := map[string]any{"id": m.ID, "object": m.Object, "created": m.Created, "owned_by": m.OwnedBy}
	for _, fields := range []map[string]any{all, own} {
		for k, v := range fields {
			out[k] = v
		}
	}
	return out
}
