package modelinfo

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/llm"
)

// TestDiscoverOllama: an Ollama endpoint is asked /api/show at its root,
// once for any number of lookups; the Modelfile's num_ctx wins.
func TestDiscoverOllama(t *testing.T) {
	t.Parallel()
	srv := fakellm.New(fakellm.WithModels("llama3.1:8b"), fakellm.WithOllamaContext(32768))
	defer srv.Close()
	d := &Discoverer{}
	target := Target{BaseURL: srv.URL(), Model: "llama3.1:8b", Wire: llm.WireOllama, Ollama: true}
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if info, ok := d.Discover(context.Background(), target); !ok || info.ContextWindow != 32768 {
				t.Errorf("Discover = %+v %v", info, ok)
			}
		}()
	}
	wg.Wait()
	if n := srv.ExtraRequests("/api/show"); n != 1 {
		t.Fatalf("/api/show asked %d times, want once", n)
	}

	withParam := fakellm.New(fakellm.WithModels("llama3.1:8b"), fakellm.WithOllamaContext(131072), fakellm.WithOllamaParameter("num_ctx", "8192"))
	defer withParam.Close()
	if info, ok := d.Discover(context.Background(), Target{BaseURL: withParam.URL(), Model: "llama3.1:8b", Ollama: true}); !ok || info.ContextWindow != 8192 {
		t.Fatalf("Discover with a Modelfile num_ctx = %+v %v", info, ok)
	}
	// A model the server does not have: unknown, not fatal.
	if _, ok := d.Discover(context.Background(), Target{BaseURL: srv.URL(), Model: "missing", Ollama: true}); ok {
		t.Fatal("a missing model was found")
	}
}

// TestDiscoverModelList: an OpenAI-compatible endpoint's model list tells
// a router's window, cap, prices and vision, a vLLM's max_model_len, and a
// llama.cpp's context as /props says it runs with.
func TestDiscoverModelList(t *testing.T) {
	t.Parallel()
	router := fakellm.New(fakellm.WithModels("openai/gpt-4o", "vendor/model"),
		fakellm.WithModelInfo("", map[string]any{"context_length": 128000}),
		fakellm.WithModelInfo("vendor/model", map[string]any{"context_length": 65536,
			"top_provider": map[string]any{"max_completion_tokens": 8192},
			"architecture": map[string]any{"input_modalities": []string{"text", "image"}},
			"pricing":      map[string]any{"prompt": "0.000001", "completion": "0.000004", "input_cache_read": "0.0000001"}}))
	defer router.Close()
	vllm := fakellm.New(fakellm.WithModels("Qwen/Qwen2.5-7B-Instruct"), fakellm.WithModelInfo("", map[string]any{"max_model_len": 32768}))
	defer vllm.Close()
	llamaCpp := fakellm.New(fakellm.WithModels("model.gguf"), fakellm.WithLlamaCppProps(4096),
		fakellm.WithModelInfo("", map[string]any{"owned_by": "llamacpp", "meta": map[string]any{"n_ctx_train": 131072}}))
	defer llamaCpp.Close()
	plain := fakellm.New(fakellm.WithAPIKey("sk-x"))
	defer plain.Close()

	d := &Discoverer{}
	for _, tt := range []struct {
		name string
		t    Target
		want Info
		ok   bool
	}{
		{"router", Target{BaseURL: router.URL(), Model: "vendor/model"},
			Info{ContextWindow: 65536, MaxOutput: 8192, Price: Price{Input: 1, Output: 4, CacheRead: 0.1}, Vision: Bool(true)}, true},
		{"router, every entry", Target{BaseURL: router.URL(), Model: "openai/gpt-4o"}, Info{ContextWindow: 128000}, true},
		{"vllm", Target{BaseURL: vllm.URL(), Model: "Qwen/Qwen2.5-7B-Instruct", Wire: llm.WireResponses}, Info{ContextWindow: 32768}, true},
		{"llama.cpp runs with less than it was trained with", Target{BaseURL: llamaCpp.URL(), Model: "anything"}, Info{ContextWindow: 4096}, true},
		{"a server that tells nothing", Target{BaseURL: plain.URL(), Model: fakellm.DefaultModel, APIKey: "sk-x"}, Info{}, false},
		{"a key refused: unknown", Target{BaseURL: plain.URL(), Model: "other", APIKey: "wrong"}, Info{}, false},
		{"anthropic endpoints are not asked", Target{BaseURL: router.URL(), Model: "vendor/model", Wire: llm.WireAnthropic}, Info{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := d.Discover(context.Background(), tt.t)
			if !reflect.DeepEqual(got, tt.want) || ok != tt.ok {
				t.Fatalf("Discover = %+v %v, want %+v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
	if n := router.ExtraRequests("/v1/models"); n != 2 {
		t.Errorf("the router's list was asked %d times, want once per model (2)", n)
	}
}

// TestDiscoverFailures: an endpoint that answers late, with an error or
// with something else is unknown, logged at debug, and asked again only
// after RetryAfter.
func TestDiscoverFailures(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if strings.HasSuffix(r.URL.Path, "/models") {
			_, _ = w.Write([]byte("<html>not json</html>"))
			return
		}
		http.Error(w, "nope", http.StatusInternalServerError)
	}))
	defer broken.Close()

	var logs bytes.Buffer
	now := time.Unix(1000, 0)
	d := &Discoverer{Timeout: 100 * time.Millisecond, RetryAfter: time.Minute,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:    func() time.Time { return now }}

	// The slow endpoint answers only at the test's end: the Discoverer's
	// timeout, not the minute of patience, must end the call. How long it
	// takes is BenchmarkDiscoverTimeout's to show.
	giveUp, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, ok := d.Discover(giveUp, Target{BaseURL: slow.URL + "/v1", Model: "m"}); ok {
		t.Fatal("a slow endpoint was found")
	}
	if giveUp.Err() != nil {
		t.Fatal("discovery of a slow endpoint waited a minute: its timeout did not end it")
	}
	for _, target := range []Target{{BaseURL: broken.URL + "/v1", Model: "m"}, {BaseURL: broken.URL + "/v1", Model: "m", Ollama: true}} {
		if _, ok := d.Discover(context.Background(), target); ok {
			t.Fatalf("%+v: found", target)
		}
	}
	if n := hits.Load(); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	if !strings.Contains(logs.String(), "level=DEBUG") || !strings.Contains(logs.String(), "HTTP 500") {
		t.Fatalf("failures not logged at debug:\n%s", logs.String())
	}
	// Remembered: no new request until RetryAfter has passed.
	d.Discover(context.Background(), Target{BaseURL: broken.URL + "/v1", Model: "m"})
	if n := hits.Load(); n != 3 {
		t.Fatalf("a remembered failure was asked again: %d requests", n)
	}
	now = now.Add(2 * time.Minute)
	d.Discover(context.Background(), Target{BaseURL: broken.URL + "/v1", Model: "m"})
	if n := hits.Load(); n != 4 {
		t.Fatalf("a failure older than RetryAfter was not asked again: %d requests", n)
	}
	// A caller that gives up does not wait for the answer.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := d.Discover(ctx, Target{BaseURL: slow.URL + "/v1", Model: "other"}); ok {
		t.Fatal("found after the caller gave up")
	}
	var none *Discoverer
	if _, ok := none.Discover(context.Background(), Target{BaseURL: slow.URL, Model: "m"}); ok {
		t.Fatal("a nil discoverer found something")
	}
}

// TestCatalogLookupDiscovers: what the configuration leaves unknown comes
// from the endpoint, and what neither knows from the table.
// BenchmarkDiscoverTimeout measures discovery against an endpoint that
// never answers, with a timeout of 100 ms: about the timeout.
func BenchmarkDiscoverTimeout(b *testing.B) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	b.Cleanup(slow.Close)
	b.Cleanup(func() { close(release) })
	for b.Loop() {
		d := &Discoverer{Timeout: 100 * time.Millisecond, RetryAfter: time.Minute, Logger: slog.New(slog.DiscardHandler)}
		if _, ok := d.Discover(b.Context(), Target{BaseURL: slow.URL + "/v1", Model: "m"}); ok {
			b.Fatal("a slow endpoint was found")
		}
	}
}

func TestCatalogLookupDiscovers(t *testing.T) {
	t.Parallel()
	srv := fakellm.New(fakellm.WithModels("gpt-4o"), fakellm.WithModelInfo("", map[string]any{"context_length": 64000}))
	defer srv.Close()
	c := NewCatalog(map[string]Info{"gpt-4o": {MaxOutput: 2000}}, &Discoverer{})
	r := c.Lookup(context.Background(), Target{BaseURL: srv.URL(), Model: "gpt-4o"})
	want := Resolved{Info: Info{ContextWindow: 64000, MaxOutput: 2000, Price: Price{Input: 2.50, Output: 10.00, CacheRead: 1.25}, Vision: Bool(true)},
		ContextWindowFrom: FromDiscovery, MaxOutputFrom: FromConfig, PriceFrom: FromBundled, VisionFrom: FromBundled}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("Lookup = %+v, want %+v", r, want)
	}
}
