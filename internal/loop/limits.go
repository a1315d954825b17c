package loop

// Limits bound the loop's recovery steps within one turn. Zero fields take
// the defaults below; a negative value means none (e.g. no silent re-asks).
type Limits struct {
	// InvalidToolRetries: replies calling unknown tools before the turn stops
	// with invalid_tool (default 3).
	InvalidToolRetries int `yaml:"invalid_tool_retries"`
	// InvalidJSONRetries: replies with invalid arguments re-asked silently
	// before error results are fed back instead (default 3).
	InvalidJSONRetries int `yaml:"invalid_json_retries"`
	// EmptyRetries: empty replies answered with a nudge (default 3).
	EmptyRetries int `yaml:"empty_retries"`
	// PrefillRetries: reasoning-only replies continued with their own
	// reasoning as prefill (default 2).
	PrefillRetries int `yaml:"prefill_retries"`
	// LengthContinuations: answers cut off by the output limit that are
	// continued (default 3).
	LengthContinuations int `yaml:"length_continuations"`
	// TruncatedToolRetries: tool calls cut off by the output limit re-asked
	// with max_tokens doubled (default 3).
	TruncatedToolRetries int `yaml:"truncated_tool_retries"`
	// BaseMaxTokens is doubled for re-asked cut-off tool calls when no
	// max_tokens is configured (default 4096).
	BaseMaxTokens int             `yaml:"base_max_tokens"`
	Guardrail     GuardrailLimits `yaml:"guardrail"`

	// BrokenArgsAreInvalid: a tool call whose arguments end mid-JSON in a
	// reply the model finished (its finish reason is not "length") has
	// invalid arguments, fed back to the model as an error, rather than
	// output cut off by the limit. Not configuration: the turn workflow sets
	// it for the code version the turn runs.
	BrokenArgsAreInvalid bool `yaml:"-" json:"-"`
}

// DefaultLimits are Hermes' limits.
func DefaultLimits() Limits {
	return Limits{
		InvalidToolRetries: 3, InvalidJSONRetries: 3, EmptyRetries: 3, PrefillRetries: 2,
		LengthContinuations: 3, TruncatedToolRetries: 3, BaseMaxTokens: 4096,
		Guardrail: DefaultGuardrailLimits(),
	}
}

// WithDefaults fills zero fields.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	fill := func(v *int, def int) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0:
			*v = 0
		}
	}
	fill(&l.InvalidToolRetries, d.InvalidToolRetries)
	fill(&l.InvalidJSONRetries, d.InvalidJSONRetries)
	fill(&l.EmptyRetries, d.EmptyRetries)
	fill(&l.PrefillRetries, d.PrefillRetries)
	fill(&l.LengthContinuations, d.LengthContinuations)
	fill(&l.TruncatedToolRetries, d.TruncatedToolRetries)
	fill(&l.BaseMaxTokens, d.BaseMaxTokens)
	return l
}
