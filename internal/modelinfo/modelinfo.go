package modelinfo

import (
	"cmp"
	"regexp"
	"sort"
	"strings"

	"github.com/talaria-agent/talaria/internal/llm"
)

// Price is a model's price in US dollars per million tokens. A cache
// price of zero is the input price (the provider bills cached tokens as
// any other input).
type Price struct {
	Input      float64 `json:"input" yaml:"input"`
	Output     float64 `json:"output" yaml:"output"`
	CacheRead  float64 `json:"cache_read,omitempty" yaml:"cache_read"`
	CacheWrite float64 `json:"cache_write,omitempty" yaml:"cache_write"`
}

// Known reports whether any price is set.
func (p Price) Known() bool { return p != Price{} }

// Cost is what usage costs at p, in US dollars. Pure.
func (p Price) Cost(u llm.Usage) float64 {
	read, write := p.CacheRead, p.CacheWrite
	read = cmp.Or(read, p.Input)
	write = cmp.Or(write, p.Input)
	plain := max(u.PromptTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	return (float64(plain)*p.Input + float64(u.CacheReadTokens)*read +
		float64(u.CacheWriteTokens)*write + float64(u.CompletionTokens)*p.Output) / 1e6
}

// Info is what is known of a model; zero fields are unknown.
type Info struct {
	ContextWindow int   `json:"context_window,omitempty" yaml:"context_window"`
	MaxOutput     int   `json:"max_output,omitempty" yaml:"max_output"`
	Price         Price `json:"price" yaml:",inline"`
	// Vision says whether the model takes pictures as input; nil is
	// unknown (a model not known to see is not shown pictures).
	Vision *bool `json:"vision,omitempty" yaml:"vision"`
}

// Sees reports whether i says the model takes pictures. Pure.
func (i Info) Sees() bool { return i.Vision != nil && *i.Vision }

// Bool is a pointer to v, for Info.Vision. Pure.
func Bool(v bool) *bool { return &v }

// In the bundled table: whether a model takes pictures.
var (
	sees  = Bool(true)
	blind = Bool(false)
)

// bundled are list prices, limits and vision of common models, as
// published when written (US dollars per million tokens). Keys are
// normalised names (Normalize); a model matches the longest key its name
// begins with. Columns: window, output cap, price (input, output, cache
// read, cache write), whether it takes pictures.
var bundled = map[string]Info{
	"gpt-4o":            {128000, 16384, Price{2.50, 10.00, 1.25, 0}, sees},
	"gpt-4o-mini":       {128000, 16384, Price{0.15, 0.60, 0.075, 0}, sees},
	"gpt-4.1":           {1047576, 32768, Price{2.00, 8.00, 0.50, 0}, sees},
	"gpt-4.1-mini":      {1047576, 32768, Price{0.40, 1.60, 0.10, 0}, sees},
	"gpt-4.1-nano":      {1047576, 32768, Price{0.10, 0.40, 0.025, 0}, sees},
	"gpt-5":             {400000, 128000, Price{1.25, 10.00, 0.125, 0}, sees},
	"gpt-5-mini":        {400000, 128000, Price{0.25, 2.00, 0.025, 0}, sees},
	"gpt-5-nano":        {400000, 128000, Price{0.05, 0.40, 0.005, 0}, sees},
	"o3":                {200000, 100000, Price{2.00, 8.00, 0.50, 0}, sees},
	"o3-mini":           {200000, 100000, Price{1.10, 4.40, 0.55, 0}, blind},
	"o4-mini":           {200000, 100000, Price{1.10, 4.40, 0.275, 0}, sees},
	"claude-opus-4":     {200000, 32000, Price{15.00, 75.00, 1.50, 18.75}, sees},
	"claude-opus-4-5":   {200000, 64000, Price{5.00, 25.00, 0.50, 6.25}, sees},
	"claude-sonnet-4":   {200000, 64000, Price{3.00, 15.00, 0.30, 3.75}, sees},
	"claude-3-7-sonnet": {200000, 64000, Price{3.00, 15.00, 0.30, 3.75}, sees},
	"claude-3-5-sonnet": {200000, 8192, Price{3.00, 15.00, 0.30, 3.75}, sees},
	"claude-haiku-4-5":  {200000, 64000, Price{1.00, 5.00, 0.10, 1.25}, sees},
	"claude-3-5-haiku":  {200000, 8192, Price{0.80, 4.00, 0.08, 1.00}, sees},
	"deepseek-chat":     {128000, 8192, Price{0.27, 1.10, 0.07, 0}, blind},
	"deepseek-reasoner": {128000, 65536, Price{0.55, 2.19, 0.14, 0}, blind},
}

// bundledKeys are the table's keys, longest first.
var bundledKeys = func() []string {
	keys := make([]string, 0, len(bundled))
	for k := range bundled {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) > len(keys[j])
		}
		return keys[i] < keys[j]
	})
	return keys
}()

// dateSuffix is a model snapshot's date: -20250514, -2024-08-06.
var dateSuffix = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2})$`)

// Normalize is the name a model is looked up by: lower case, without a
// router's vendor prefix (openai/, anthropic/), a snapshot date, a
// -latest or :tag suffix, with Anthropic's dotted versions as dashes
// (claude-sonnet-4.5 is claude-sonnet-4-5). Pure.
func Normalize(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.Index(m, ":"); i >= 0 {
		m = m[:i]
	}
	m = strings.TrimSuffix(m, "-latest")
	m = dateSuffix.ReplaceAllString(m, "")
	if strings.HasPrefix(m, "claude") {
		m = strings.ReplaceAll(m, ".", "-")
	}
	return m
}

// Bundled is the table's entry for model: the longest key the normalised
// name equals or begins with followed by a dash; false when none does.
func Bundled(model string) (Info, bool) {
	m := Normalize(model)
	for _, k := range bundledKeys {
		if m == k || strings.HasPrefix(m, k+"-") {
			info := bundled[k]
			if info.Vision != nil {
				info.Vision = Bool(*info.Vision) // the table's own stays as written
			}
			return info, true
		}
	}
	return Info{}, false
}
