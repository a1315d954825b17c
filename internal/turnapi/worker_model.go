package turnapi

import "time"

// WorkerModel is a worker's model configuration: what a turn uses when
// its sender did not name a model (or its timeouts and attempts) itself.
// The endpoint and key are never part of it: they stay with the worker.
type WorkerModel struct {
	// Name is the model id sent with each request.
	Name string
	// Timeout, MaxRetryAfter and Attempts bound one model call (zero:
	// the turn's defaults).
	Timeout       time.Duration `json:",omitempty"`
	MaxRetryAfter time.Duration `json:",omitempty"`
	Attempts      int           `json:",omitempty"`
	// Stream shapes each request (worker side only). MaxTokens caps each
	// reply; the turn also doubles it for re-asked cut-off tool calls
	// (loop.Limits.BaseMaxTokens), so BeginTurn reports it.
	Stream    bool `json:"-"`
	MaxTokens int  `json:",omitempty"`
	// ContextWindow is the turn's model's context window as the worker
	// knows it (compression.context_window, models: in config.yaml, what
	// the endpoint tells, the bundled table); 0: unknown. BeginTurn
	// reports it when the turn asks for a threshold.
	ContextWindow int `json:",omitempty"`
	// CompactionThreshold is the threshold the turn asked for
	// (BeginTurnInput.CompactionRatio) from ContextWindow; 0: the worker
	// knows no window, the sender's threshold holds.
	CompactionThreshold int `json:",omitempty"`
}
