package fakellm_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// do sends one request to the server's root (path beside /v1) and decodes
// the JSON answer into out.
func do(t *testing.T, s *fakellm.Server, method, path, body string, out any) int {
	t.Helper()
	root := strings.TrimSuffix(s.URL(), "/v1")
	req, err := http.NewRequestWithContext(testCtx(t), method, root+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, data)
		}
	}
	return resp.StatusCode
}

// showAnswer is the part of Ollama's /api/show answer the tests read.
type showAnswer struct {
	Modelfile  string         `json:"modelfile"`
	Parameters string         `json:"parameters"`
	Details    map[string]any `json:"details"`
	ModelInfo  map[string]any `json:"model_info"`
	Error      string         `json:"error"`
}

func TestOllamaShow(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.WithModels("llama3.1:8b"), fakellm.WithOllamaContext(32768))
	var got showAnswer
	if code := do(t, s, http.MethodPost, "/api/show", `{"model":"llama3.1:8b"}`, &got); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if got.ModelInfo["general.architecture"] != "llama" || got.ModelInfo["llama.context_length"] != float64(32768) ||
		got.Details["family"] != "llama" || got.Parameters != "" || !strings.HasPrefix(got.Modelfile, "# Modelfile") {
		t.Fatalf("/api/show = %+v", got)
	}
	// Older clients name the model "name".
	if code := do(t, s, http.MethodPost, "/api/show", `{"name":"llama3.1:8b"}`, nil); code != http.StatusOK {
		t.Fatalf("name: status %d", code)
	}
	var missing showAnswer
	if code := do(t, s, http.MethodPost, "/api/show", `{"model":"nope"}`, &missing); code != http.StatusNotFound || !strings.Contains(missing.Error, "not found") {
		t.Fatalf("missing model: %d %+v", code, missing)
	}
	if code := do(t, s, http.MethodPost, "/api/show", `{`, nil); code != http.StatusBadRequest {
		t.Fatalf("bad body: status %d", code)
	}
	if code := do(t, s, http.MethodGet, "/api/show", "", nil); code != http.StatusMethodNotAllowed {
		t.Fatalf("GET: status %d", code)
	}
	if n := s.ExtraRequests("/api/show"); n != 5 {
		t.Fatalf("ExtraRequests = %d, want 5", n)
	}
}

func TestOllamaParameter(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.WithModels("m"), fakellm.WithOllamaParameter("num_ctx", "8192"), fakellm.WithOllamaParameter("temperature", "0.2"))
	var got showAnswer
	do(t, s, http.MethodPost, "/api/show", `{"model":"m:latest"}`, &got)
	if !strings.Contains(got.Parameters, "num_ctx") || !strings.Contains(got.Parameters, "8192") ||
		!strings.Contains(got.Modelfile, "PARAMETER num_ctx 8192\n") || !strings.Contains(got.Modelfile, "PARAMETER temperature 0.2\n") {
		t.Fatalf("/api/show = %+v", got)
	}
	if _, ok := got.ModelInfo["llama.context_length"]; ok {
		t.Fatal("a context length without WithOllamaContext")
	}
}

// TestNoOllamaByDefault: without the options the endpoints are unknown.
func TestNoOllamaByDefault(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, p := range []string{"/api/show", "/props"} {
		if code := do(t, s, http.MethodPost, p, `{"model":"fake-model"}`, nil); code != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, code)
		}
	}
}

func TestModelInfo(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.WithModels("a", "b"),
		fakellm.WithModelInfo("", map[string]any{"context_length": 8192, "owned_by": "router"}),
		fakellm.WithModelInfo("b", map[string]any{"context_length": 65536, "pricing": map[string]any{"prompt": "0.000001"}}))
	var list struct {
		Data []map[string]any `json:"data"`
	}
	do(t, s, http.MethodGet, "/v1/models", "", &list)
	if len(list.Data) != 2 || list.Data[0]["id"] != "a" || list.Data[0]["context_length"] != float64(8192) || list.Data[0]["owned_by"] != "router" ||
		list.Data[1]["context_length"] != float64(65536) || list.Data[1]["pricing"].(map[string]any)["prompt"] != "0.000001" {
		t.Fatalf("/v1/models = %+v", list.Data)
	}
	var one map[string]any
	do(t, s, http.MethodGet, "/v1/models/b", "", &one)
	if one["id"] != "b" || one["object"] != "model" || one["context_length"] != float64(65536) {
		t.Fatalf("/v1/models/b = %+v", one)
	}
	plain := startServer(t)
	var entry map[string]any
	do(t, plain, http.MethodGet, "/v1/models/"+fakellm.DefaultModel, "", &entry)
	if _, ok := entry["context_length"]; ok || entry["owned_by"] != "fakellm" {
		t.Fatalf("plain entry = %+v", entry)
	}
	if n := s.ExtraRequests("/v1/models"); n != 2 {
		t.Fatalf("ExtraRequests(/v1/models) = %d, want 2", n)
	}
}

func TestLlamaCppProps(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.WithLlamaCppProps(4096))
	var props struct {
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if code := do(t, s, http.MethodGet, "/props", "", &props); code != http.StatusOK || props.Settings.NCtx != 4096 {
		t.Fatalf("/props = %d %+v", code, props)
	}
}
