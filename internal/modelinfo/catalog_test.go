package modelinfo

import (
	"context"
	"reflect"
	"testing"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	cfg := layer{Info{ContextWindow: 8192}, FromConfig}
	found := layer{Info{ContextWindow: 32768, MaxOutput: 4096, Price: Price{Input: 1, Output: 2}}, FromDiscovery}
	table := layer{Info{ContextWindow: 128000, MaxOutput: 16384, Price: Price{Input: 5, Output: 10}}, FromBundled}
	for _, tt := range []struct {
		name   string
		layers []layer
		want   Resolved
	}{
		{"nothing", nil, Resolved{ContextWindowFrom: FromNowhere, MaxOutputFrom: FromNowhere, PriceFrom: FromNowhere, VisionFrom: FromNowhere}},
		{"part by part, first known wins", []layer{cfg, found, table},
			Resolved{Info: Info{ContextWindow: 8192, MaxOutput: 4096, Price: Price{Input: 1, Output: 2}},
				ContextWindowFrom: FromConfig, MaxOutputFrom: FromDiscovery, PriceFrom: FromDiscovery, VisionFrom: FromNowhere}},
		{"the table fills the rest", []layer{cfg, {Info{}, FromDiscovery}, table},
			Resolved{Info: Info{ContextWindow: 8192, MaxOutput: 16384, Price: Price{Input: 5, Output: 10}},
				ContextWindowFrom: FromConfig, MaxOutputFrom: FromBundled, PriceFrom: FromBundled, VisionFrom: FromNowhere}},
		{"a price is taken whole", []layer{{Info{Price: Price{Output: 3}}, FromConfig}, table},
			Resolved{Info: Info{ContextWindow: 128000, MaxOutput: 16384, Price: Price{Output: 3}},
				ContextWindowFrom: FromBundled, MaxOutputFrom: FromBundled, PriceFrom: FromConfig, VisionFrom: FromNowhere}},
		{"vision: a configured no wins over a seeing table", []layer{{Info{Vision: Bool(false)}, FromConfig}, {Info{Vision: Bool(true)}, FromDiscovery}, {Info{Vision: Bool(true)}, FromBundled}},
			Resolved{Info: Info{Vision: Bool(false)},
				ContextWindowFrom: FromNowhere, MaxOutputFrom: FromNowhere, PriceFrom: FromNowhere, VisionFrom: FromConfig}},
		{"vision: discovery before the table", []layer{cfg, {Info{Vision: Bool(true)}, FromDiscovery}, {Info{Vision: Bool(false)}, FromBundled}},
			Resolved{Info: Info{ContextWindow: 8192, Vision: Bool(true)},
				ContextWindowFrom: FromConfig, MaxOutputFrom: FromNowhere, PriceFrom: FromNowhere, VisionFrom: FromDiscovery}},
		{"vision: the table's when nobody else says", []layer{cfg, {Info{}, FromDiscovery}, {Info{Vision: Bool(false)}, FromBundled}},
			Resolved{Info: Info{ContextWindow: 8192, Vision: Bool(false)},
				ContextWindowFrom: FromConfig, MaxOutputFrom: FromNowhere, PriceFrom: FromNowhere, VisionFrom: FromBundled}},
	} {
		if got := resolve(tt.layers...); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: resolve = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestCatalogOverride(t *testing.T) {
	t.Parallel()
	c := NewCatalog(map[string]Info{
		"gpt-4o":      {ContextWindow: 1000},
		"llama3.1":    {ContextWindow: 2000},
		"qwen2.5:7b":  {ContextWindow: 3000},
		"My-Model":    {ContextWindow: 4000},
		"vendor/tool": {ContextWindow: 5000},
	}, nil)
	for _, tt := range []struct {
		model string
		want  int
	}{
		{"gpt-4o", 1000},
		{"gpt-4o-2024-08-06", 1000},
		{"openai/gpt-4o", 1000},
		{"gpt-4o-mini", 0},
		{"llama3.1:8b", 2000},
		{"llama3.1:latest", 2000},
		{"qwen2.5:7b", 3000},
		{"qwen2.5:72b", 0}, // a tagged name covers only itself
		{"my-model", 4000},
		{"vendor/tool", 5000},
		{"other/tool", 0}, // a vendor's name covers only itself
		{"unknown", 0},
	} {
		got, _ := c.Override(tt.model)
		if got.ContextWindow != tt.want {
			t.Errorf("Override(%q) = %d, want %d", tt.model, got.ContextWindow, tt.want)
		}
	}
	var none *Catalog
	if _, ok := none.Override("gpt-4o"); ok {
		t.Error("a nil catalog has overrides")
	}
	if r := none.Info("gpt-4o"); r.ContextWindow != 128000 || r.ContextWindowFrom != FromBundled {
		t.Errorf("a nil catalog knows the table: %+v", r)
	}
}

func TestCatalogInfo(t *testing.T) {
	t.Parallel()
	c := NewCatalog(map[string]Info{"gpt-4o": {ContextWindow: 64000}}, nil)
	r := c.Info("gpt-4o")
	if r.ContextWindow != 64000 || r.ContextWindowFrom != FromConfig || r.Price.Input != 2.50 || r.PriceFrom != FromBundled ||
		r.MaxOutput != 16384 || r.MaxOutputFrom != FromBundled {
		t.Fatalf("Info = %+v", r)
	}
	if r := c.Info("nobody-knows"); r.ContextWindowFrom != FromNowhere || r.PriceFrom != FromNowhere || r.ContextWindow != 0 {
		t.Fatalf("Info of an unknown model = %+v", r)
	}
}

// TestBundledVision: the table says which of its models take pictures,
// and a configured vision wins over it.
func TestBundledVision(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		model string
		want  *bool
	}{
		{"gpt-4o", Bool(true)},
		{"gpt-4o-mini-2024-07-18", Bool(true)},
		{"openai/gpt-4.1-nano", Bool(true)},
		{"gpt-5", Bool(true)},
		{"o3", Bool(true)},
		{"o3-mini", Bool(false)},
		{"o4-mini", Bool(true)},
		{"claude-sonnet-4-5-20250929", Bool(true)},
		{"anthropic/claude-3.5-haiku", Bool(true)},
		{"deepseek-chat", Bool(false)},
		{"deepseek-reasoner", Bool(false)},
		{"llama3.1:8b", nil},
	} {
		r := NewCatalog(nil, nil).Info(tt.model)
		if !reflect.DeepEqual(r.Vision, tt.want) {
			t.Errorf("%s: vision %v, want %v", tt.model, fmtBool(r.Vision), fmtBool(tt.want))
		}
		want := FromNowhere
		if tt.want != nil {
			want = FromBundled
		}
		if r.VisionFrom != want {
			t.Errorf("%s: vision from %s, want %s", tt.model, r.VisionFrom, want)
		}
	}
	c := NewCatalog(map[string]Info{"gpt-4o": {Vision: Bool(false)}, "my-llava": {Vision: Bool(true)}}, nil)
	if r := c.Info("gpt-4o"); r.Sees() || r.VisionFrom != FromConfig {
		t.Errorf("a configured no: %+v", r)
	}
	if r := c.Info("my-llava"); !r.Sees() || r.VisionFrom != FromConfig {
		t.Errorf("a configured yes: %+v", r)
	}
	// The table's entries stay as written whatever a caller does with
	// what it was given.
	info, _ := Bundled("gpt-4o")
	*info.Vision = false
	if again, _ := Bundled("gpt-4o"); !again.Sees() {
		t.Fatal("a caller changed the bundled table")
	}
}

// fmtBool shows a *bool: yes, no or unknown.
func fmtBool(b *bool) string {
	switch {
	case b == nil:
		return "unknown"
	case *b:
		return "yes"
	}
	return "no"
}

// TestCatalogLookupSkipsDiscovery: a model the configuration tells
// everything of is not asked about.
func TestCatalogLookupSkipsDiscovery(t *testing.T) {
	t.Parallel()
	d := &Discoverer{}
	whole := Info{ContextWindow: 8192, MaxOutput: 1024, Price: Price{Input: 1, Output: 1}, Vision: Bool(true)}
	c := NewCatalog(map[string]Info{"m": whole}, d)
	// An address nothing answers at: asking would fail (and be cached).
	r := c.Lookup(context.Background(), Target{BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	if !reflect.DeepEqual(r.Info, whole) || r.ContextWindowFrom != FromConfig || r.VisionFrom != FromConfig {
		t.Fatalf("Lookup = %+v", r)
	}
	if len(d.cache) != 0 {
		t.Fatalf("the endpoint was asked: %d cache entries", len(d.cache))
	}
}

func TestOllamaExtraBody(t *testing.T) {
	t.Parallel()
	want := map[string]any{"options": map[string]any{"num_ctx": 32768}}
	for _, tt := range []struct {
		name string
		r    Resolved
		want map[string]any
	}{
		{"discovered", Resolved{Info: Info{ContextWindow: 32768}, ContextWindowFrom: FromDiscovery}, want},
		{"configured", Resolved{Info: Info{ContextWindow: 32768}, ContextWindowFrom: FromConfig}, want},
		{"bundled is another server's", Resolved{Info: Info{ContextWindow: 128000}, ContextWindowFrom: FromBundled}, nil},
		{"unknown", Resolved{ContextWindowFrom: FromNowhere}, nil},
	} {
		if got := OllamaExtraBody(tt.r); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: OllamaExtraBody = %v, want %v", tt.name, got, tt.want)
		}
	}
	c := NewCatalog(map[string]Info{"m": {ContextWindow: 16384}}, nil)
	if got := c.ExtraBody(context.Background(), Target{BaseURL: "http://localhost:8000/v1", Model: "m"}); got != nil {
		t.Errorf("ExtraBody of an endpoint that is not Ollama = %v", got)
	}
	got := c.ExtraBody(context.Background(), Target{BaseURL: "http://gpu:8000/v1", Model: "m", Ollama: true})
	if !reflect.DeepEqual(got, map[string]any{"options": map[string]any{"num_ctx": 16384}}) {
		t.Errorf("ExtraBody of an Ollama provider = %v", got)
	}
}
