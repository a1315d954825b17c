package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/compress"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/modelinfo"
	"github.com/talaria-agent/talaria/workflows"
)

// numCtxOf is the options.num_ctx a request body carries (0: none).
func numCtxOf(t *testing.T, raw []byte) int {
	t.Helper()
	var body struct {
		Options struct {
			NumCtx int `json:"num_ctx"`
		} `json:"options"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return body.Options.NumCtx
}

// TestModelConfigKnowsTheModel: an Ollama endpoint's window, as its
// /api/show tells it, is the worker's window of the model and its
// requests' num_ctx; a fallback that is not Ollama gets no num_ctx; the
// configuration's window wins over the server's, compression's over both.
func TestModelConfigKnowsTheModel(t *testing.T) {
	t.Parallel()
	ollama := fakellm.New(fakellm.WithModels("llama3.1:8b"), fakellm.WithOllamaContext(32768))
	defer ollama.Close()
	cfg := config.Default(t.TempDir())
	cfg.Model.Provider, cfg.Model.BaseURL, cfg.Model.Name = config.ProviderOllama, ollama.URL(), "llama3.1:8b"
	cfg.FallbackProviders = []config.Provider{{BaseURL: "https://api.example.com/v1", APIKey: "k", Model: "gpt-4o"}}
	m := NewModelConfig(cfg)

	list, err := m.Providers("")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"options": map[string]any{"num_ctx": 32768}}
	if len(list) != 2 || !reflect.DeepEqual(list[0].ExtraBody, want) || list[1].ExtraBody != nil {
		t.Fatalf("endpoints = %+v", list)
	}
	if got := m.ContextWindow(context.Background(), ""); got != 32768 {
		t.Fatalf("ContextWindow = %d, want the server's 32768", got)
	}
	r := m.ModelInfo(context.Background(), "")
	if r.ContextWindowFrom != modelinfo.FromDiscovery || r.PriceFrom != modelinfo.FromNowhere {
		t.Fatalf("ModelInfo = %+v", r)
	}
	if n := ollama.ExtraRequests("/api/show"); n != 1 {
		t.Fatalf("/api/show asked %d times, want once", n)
	}

	cfg.Models = map[string]modelinfo.Info{"llama3.1:8b": {ContextWindow: 16384, Price: modelinfo.Price{Input: 0.1, Output: 0.1}}}
	m.Set(cfg)
	if list, _ := m.Providers(""); numCtx(list[0].ExtraBody) != 16384 {
		t.Fatalf("a configured window: extra body %v", list[0].ExtraBody)
	}
	if p := m.ModelInfo(context.Background(), "llama3.1:8b").Price; !p.Known() || p.Input != 0.1 {
		t.Fatalf("Price = %+v", p)
	}
	cfg.Compression.ContextWindow = 20000
	m.Set(cfg)
	if got := m.ContextWindow(context.Background(), ""); got != 20000 {
		t.Fatalf("ContextWindow with compression.context_window = %d", got)
	}
	if n := ollama.ExtraRequests("/api/show"); n != 1 {
		t.Fatalf("/api/show asked %d times across reloads, want once", n)
	}
}

// numCtx is the num_ctx of an extra body (0: none).
func numCtx(extra map[string]any) int {
	opts, _ := extra["options"].(map[string]any)
	n, _ := opts["num_ctx"].(int)
	return n
}

// TestOllamaWindowCompacts (criterion: model discovery): a fake Ollama
// whose /api/show reports a 32768-token window gets that window as
// "options":{"num_ctx":32768} in every request, at its native /api/chat
// (its OpenAI-compatible /v1 would ignore the option), and a turn whose
// sender left the window to the model compacts at 32768's threshold,
// where the 128000 it would have assumed never would.
func TestOllamaWindowCompacts(t *testing.T) {
	t.Parallel()
	const window, files = 32768, 60
	m := &compactingModel{}
	model := fakellm.New(fakellm.WithResponder(m.respond), fakellm.WithOllamaContext(window))
	t.Cleanup(model.Close)
	var cfg config.Config
	run := &loopRun{t: t, model: model, workdir: t.TempDir()}
	run.rt = startRuntime(t, model, func(c *config.Config, _ *Options) {
		c.Model.Provider = config.ProviderOllama
		c.Compression.KeepLast = compactKeepLast
		cfg = *c
	})
	for i := 1; i <= files; i++ {
		var b strings.Builder
		for line := 0; line < 30; line++ {
			fmt.Fprintf(&b, "file %d line %d: %s\n", i, line, strings.Repeat("abcdefgh", 8))
		}
		if err := os.WriteFile(filepath.Join(run.workdir, fmt.Sprintf("big-%d.txt", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run.turn("probe-session", "probe")
	base := (len(model.Requests()[0].Raw) + 3) / 4

	settings := CompactionFor(cfg)
	threshold, assumed := compress.Threshold(window, 0, settings.Ratio), compress.Threshold(0, 0, settings.Ratio)
	if settings.Threshold != assumed || settings.Ratio != config.DefaultCompressionThreshold {
		t.Fatalf("the sender's settings = %+v, want the threshold of a model nothing is known of (%d) and the worker asked", settings, assumed)
	}
	// Each file read adds about 700 tokens: enough reads to pass the
	// threshold by a few files.
	reads := (threshold-base)/600 + 4
	if base >= threshold || reads > files {
		t.Fatalf("base %d tokens leaves no room under the threshold %d", base, threshold)
	}
	m.mu.Lock()
	m.reads = reads
	m.mu.Unlock()
	res := run.turn("long", compactTask, func(in *workflows.TurnInput) { in.Compaction = settings })
	if !res.Completed || res.FinalResponse == nil || *res.FinalResponse != "done" {
		t.Fatalf("turn: %+v", res)
	}
	if res.Compactions < 1 {
		t.Fatalf("no compaction at the 32768-token window (threshold %d, base %d, %d reads)", threshold, base, reads)
	}
	t.Logf("base %d tokens, threshold %d (window %d): %d compactions in %d model calls", base, threshold, window, res.Compactions, res.APICalls)
	for i, r := range model.Requests() {
		if r.Wire != fakellm.WireOllama {
			t.Fatalf("request %d went to the %s endpoint, want Ollama's /api/chat", i, r.Wire)
		}
		if got := numCtxOf(t, r.Raw); got != window {
			t.Fatalf("request %d carries num_ctx %d, want %d", i, got, window)
		}
		if tokens := (len(r.Raw) + 3) / 4; tokens >= assumed {
			t.Fatalf("request %d has %d tokens: the assumed window's threshold %d would have compacted too", i, tokens, assumed)
		}
	}
	if !strings.Contains(string(model.Requests()[0].Raw), `"options":{"num_ctx":32768}`) {
		t.Fatalf("the request body does not spell the option as Ollama reads it: %.300s", model.Requests()[0].Raw)
	}
	if n := model.ExtraRequests("/api/show"); n != 1 {
		t.Fatalf("/api/show asked %d times, want once for the worker", n)
	}
}

// TestPriceAtTheServingEndpoint: a call a fallback router served is
// priced at what that router lists, not at what the primary knows.
func TestPriceAtTheServingEndpoint(t *testing.T) {
	t.Parallel()
	router := fakellm.New(fakellm.WithModels("vendor/big"),
		fakellm.WithModelInfo("vendor/big", map[string]any{"pricing": map[string]any{"prompt": "0.000002", "completion": "0.000008"}}))
	defer router.Close()
	cfg := config.Default(t.TempDir())
	cfg.Model.BaseURL, cfg.Model.APIKey, cfg.Model.Name = "http://127.0.0.1:9/v1", "k", "vendor/big"
	cfg.FallbackProviders = []config.Provider{{BaseURL: router.URL(), APIKey: "k2"}}
	m := NewModelConfig(cfg)
	list, err := m.Providers("")
	if err != nil || len(list) != 2 {
		t.Fatalf("endpoints = %+v, %v", list, err)
	}
	p, ok := m.PriceAt(context.Background(), list[1])
	if !ok || p.Input != 2 || p.Output != 8 {
		t.Fatalf("price at the router = %+v %v, want its listed $2/$8 per million", p, ok)
	}
	if _, ok := m.PriceAt(context.Background(), list[0]); ok {
		t.Fatal("the unreachable primary knows no price for vendor/big")
	}
}

// TestVisionAt: whether a model is shown pictures comes from the
// configuration, then what the serving endpoint tells, then the bundled
// table; a model nobody knows is not.
func TestVisionAt(t *testing.T) {
	t.Parallel()
	router := fakellm.New(fakellm.WithModels("vendor/sees", "vendor/blind", "vendor/quiet", "gpt-4o", "deepseek-chat"),
		fakellm.WithModelInfo("vendor/sees", map[string]any{"architecture": map[string]any{"input_modalities": []string{"text", "image"}}}),
		fakellm.WithModelInfo("vendor/blind", map[string]any{"architecture": map[string]any{"input_modalities": []string{"text"}}}),
		fakellm.WithModelInfo("gpt-4o", map[string]any{"architecture": map[string]any{"input_modalities": []string{"text"}}}))
	defer router.Close()
	cfg := config.Default(t.TempDir())
	cfg.Model.BaseURL, cfg.Model.APIKey, cfg.Model.Name = router.URL(), "k", "vendor/sees"
	cfg.Models = map[string]modelinfo.Info{"vendor/blind": {Vision: modelinfo.Bool(true)}, "deepseek-chat": {Vision: modelinfo.Bool(true)}}
	m := NewModelConfig(cfg)
	list, err := m.Providers("")
	if err != nil || len(list) != 1 {
		t.Fatalf("endpoints = %+v, %v", list, err)
	}
	for _, tt := range []struct {
		model string
		want  bool
	}{
		{"vendor/sees", true},     // the endpoint's list says image
		{"vendor/blind", true},    // the configuration wins over the list
		{"deepseek-chat", true},   // and over the table
		{"gpt-4o", false},         // the endpoint's list wins over the table
		{"vendor/quiet", false},   // nobody says: not shown pictures
		{"claude-sonnet-4", true}, // not listed: the table
		{"o3-mini", false},        // the table says no
		{"unlisted-model", false}, // nobody knows
	} {
		ep := list[0]
		ep.Model = tt.model
		if got := m.VisionAt(context.Background(), ep); got != tt.want {
			t.Errorf("VisionAt(%s) = %v, want %v", tt.model, got, tt.want)
		}
	}
}
