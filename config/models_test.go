package config

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/modelinfo"
)

// TestLoadModels: the models: key reads every field (vision as yes, no
// or unsaid), prices: still loads, and both feed ModelOverrides (a models: entry's prices win).
func TestLoadModels(t *testing.T) {
	t.Parallel()

	home := t.TempDir()
	writeConfigFile(t, home, `models:
  llama3.1:8b:
    context_window: 32768
    max_output: 4096
    input: 0.1
    output: 0.2
    cache_read: 0.01
    cache_write: 0.15
    vision: true
  my-router/model:
    context_window: 200000
  text-only:
    vision: false
prices:
  my-router/model:
    input: 3
    output: 15
  llama3.1:8b:
    input: 9
    output: 9
`)
	c, err := Load(home, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := modelinfo.Info{ContextWindow: 32768, MaxOutput: 4096, Price: modelinfo.Price{Input: 0.1, Output: 0.2, CacheRead: 0.01, CacheWrite: 0.15},
		Vision: modelinfo.Bool(true)}
	if got := c.Models["llama3.1:8b"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("models entry = %+v, want %+v", got, want)
	}
	if got := c.Models["text-only"].Vision; got == nil || *got {
		t.Errorf("vision: false reads as %v", got)
	}
	if got := c.Models["my-router/model"].Vision; got != nil {
		t.Errorf("an entry that says nothing of vision reads as %v", *got)
	}
	over := c.ModelOverrides()
	if got := over["llama3.1:8b"].Price.Input; got != 0.1 {
		t.Errorf("models: prices must win over prices:, input = %g", got)
	}
	if got := over["my-router/model"]; got.ContextWindow != 200000 || got.Price.Input != 3 || got.Price.Output != 15 {
		t.Errorf("prices: must fill a models: entry without prices: %+v", got)
	}
}

// TestLoadModelsUnknownKey: a misspelt field of a models: entry is named.
func TestLoadModelsUnknownKey(t *testing.T) {
	t.Parallel()

	home := t.TempDir()
	writeConfigFile(t, home, "models:\n  m:\n    context_windw: 8192\n")
	_, err := Load(home, env(nil))
	if err == nil || !strings.Contains(err.Error(), "context_windw") {
		t.Fatalf("Load = %v, want the unknown key named", err)
	}
}

func TestModelProblems(t *testing.T) {
	t.Parallel()

	for _, tt := range []struct {
		name    string
		models  map[string]modelinfo.Info
		prices  map[string]Price
		problem string // "" when valid
	}{
		{"none", nil, nil, ""},
		{"prices only", nil, map[string]Price{"m": {Input: 1, Output: 2}}, ""},
		{"a whole entry", map[string]modelinfo.Info{"m": {ContextWindow: 8192, MaxOutput: 1024, Price: Price{Input: 1, Output: 2, CacheRead: 0.1, CacheWrite: 1.25}}}, nil, ""},
		{"window only", map[string]modelinfo.Info{"m": {ContextWindow: 8192}}, nil, ""},
		{"negative window", map[string]modelinfo.Info{"m": {ContextWindow: -1}}, nil, "models.m.context_window must not be negative"},
		{"tiny window", map[string]modelinfo.Info{"m": {ContextWindow: 512}}, nil, "models.m.context_window must be at least 1024"},
		{"negative output", map[string]modelinfo.Info{"m": {MaxOutput: -5}}, nil, "models.m.max_output must not be negative"},
		{"output above window", map[string]modelinfo.Info{"m": {ContextWindow: 4096, MaxOutput: 4096}}, nil, "models.m.max_output (4096) must be below context_window (4096)"},
		{"negative input", map[string]modelinfo.Info{"m": {Price: Price{Input: -1}}}, nil, "models.m.input must be a price of 0 or more"},
		{"NaN cache read", map[string]modelinfo.Info{"m": {Price: Price{CacheRead: math.NaN()}}}, nil, "models.m.cache_read"},
		{"infinite cache write", map[string]modelinfo.Info{"m": {Price: Price{CacheWrite: math.Inf(1)}}}, nil, "models.m.cache_write"},
		{"empty name", map[string]modelinfo.Info{"": {}}, nil, "models: an entry has an empty model name"},
		{"negative prices: output", nil, map[string]Price{"m": {Output: -2}}, "prices.m.output must be a price of 0 or more"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			got := modelProblems(tt.models, tt.prices)
			if tt.problem == "" {
				if len(got) != 0 {
					t.Fatalf("problems = %q, want none", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], tt.problem) || strings.Contains(got[0], "\n") {
				t.Fatalf("problems = %q, want one line with %q", got, tt.problem)
			}
		})
	}
}

// TestValidateNamesModelProblems: Validate reports a models: problem as
// invalid configuration.
func TestValidateNamesModelProblems(t *testing.T) {
	t.Parallel()

	c := Default(t.TempDir())
	c.Models = map[string]modelinfo.Info{"m": {ContextWindow: -3}}
	if err := c.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "models.m.context_window") {
		t.Fatalf("Validate = %v", err)
	}
}

func TestPriceOf(t *testing.T) {
	t.Parallel()

	c := Default(t.TempDir())
	c.Models = map[string]modelinfo.Info{"local": {ContextWindow: 8192, Price: Price{Input: 0.5, Output: 1, CacheRead: 0.05}}}
	c.Prices = map[string]Price{"old": {Input: 2, Output: 4}, "gpt-4o": {Input: 1, Output: 1}}
	for _, tt := range []struct {
		model string
		want  Price
		ok    bool
	}{
		{"local", Price{Input: 0.5, Output: 1, CacheRead: 0.05}, true},
		{"old", Price{Input: 2, Output: 4}, true},
		{"gpt-4o", Price{Input: 1, Output: 1}, true},
		{"gpt-4o-mini", Price{Input: 0.15, Output: 0.60, CacheRead: 0.075}, true},
		{"claude-sonnet-4-20250514", Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}, true},
		{"unheard-of", Price{}, false},
	} {
		got, ok := c.PriceOf(tt.model)
		if got != tt.want || ok != tt.ok {
			t.Errorf("PriceOf(%q) = %+v %v, want %+v %v", tt.model, got, ok, tt.want, tt.ok)
		}
	}
}
