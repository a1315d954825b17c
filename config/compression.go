package config

import (
	"fmt"
	"time"

	"github.com/talaria-agent/talaria/internal/compress"
)

// Compression defaults.
const (
	DefaultCompressionThreshold = compress.DefaultRatio
	DefaultKeepFirst            = compress.DefaultKeepFirst
	DefaultKeepLast             = compress.DefaultKeepLast
	DefaultOverflowAttempts     = 3
	DefaultSummaryCooldown      = 10 * time.Minute
)

// Compression says when and how a long conversation is compacted: the
// middle is replaced by a structured summary in a new child session (the
// old session stays in the store).
type Compression struct {
	// Enabled compacts before a model call once the context passes the
	// threshold (default true). Off, a conversation is compacted only when
	// the provider refuses a request as too long.
	Enabled bool `yaml:"enabled"`
	// ContextWindow is the model's context window in tokens; 0 (the
	// default): the model's as known (models: in config.yaml, what the
	// endpoint tells, the bundled table), else DefaultContextWindow.
	ContextWindow int `yaml:"context_window"`
	// Threshold is the share of (context_window - model.max_tokens) at
	// which compaction runs.
	Threshold float64 `yaml:"threshold"`
	// KeepFirst and KeepLast are the messages kept verbatim at the start
	// and the end.
	KeepFirst int `yaml:"keep_first"`
	KeepLast  int `yaml:"keep_last"`
	// OverflowAttempts bounds the compactions tried for one request the
	// provider refused as too long (0: none, the turn fails).
	OverflowAttempts int `yaml:"overflow_attempts"`
	// SummaryCooldown: after the summarising call fails, the turn's
	// compactions use a static summary (the task and the tools used) for
	// this long; the next turn tries the summariser again. YAML durations
	// need a unit ("10m").
	SummaryCooldown time.Duration `yaml:"summary_cooldown"`
}

// DefaultCompression returns the built-in compression settings.
func DefaultCompression() Compression {
	return Compression{
		Enabled: true, Threshold: DefaultCompressionThreshold,
		KeepFirst: DefaultKeepFirst, KeepLast: DefaultKeepLast,
		OverflowAttempts: DefaultOverflowAttempts, SummaryCooldown: DefaultSummaryCooldown,
	}
}

// problems lists what is wrong with the settings.
func (c Compression) problems() []string {
	var out []string
	if c.ContextWindow != 0 && c.ContextWindow < minContextWindow {
		out = append(out, fmt.Sprintf("compression.context_window must be at least %d tokens, or 0 for the model's (got %d)", minContextWindow, c.ContextWindow))
	}
	if !(c.Threshold > 0 && c.Threshold <= 1) {
		out = append(out, fmt.Sprintf("compression.threshold must be above 0 and at most 1 (got %g)", c.Threshold))
	}
	if c.KeepFirst < 1 || c.KeepLast < 1 {
		out = append(out, "compression.keep_first and keep_last must be at least 1")
	}
	if c.OverflowAttempts < 0 {
		out = append(out, "compression.overflow_attempts must not be negative")
	}
	if c.SummaryCooldown < 0 {
		out = append(out, "compression.summary_cooldown must not be negative")
	}
	return out
}
