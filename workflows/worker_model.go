package workflows

import "github.com/talaria-agent/talaria/internal/turnapi"

// withWorkerModel fills the model settings the sender left unset (asked is
// the input before defaults) with those of the worker that began the turn;
// w is nil in results recorded before workers reported them, which leaves
// in as it was. An empty model name stays empty: each model call then
// asks the worker's model of that moment. Pure.
func withWorkerModel(in, asked TurnInput, w *turnapi.WorkerModel) TurnInput {
	if w == nil {
		return in
	}
	if asked.ModelTimeout <= 0 && w.Timeout > 0 {
		in.ModelTimeout = w.Timeout
	}
	if asked.MaxRetryAfter <= 0 && w.MaxRetryAfter > 0 {
		in.MaxRetryAfter = w.MaxRetryAfter
	}
	if asked.ModelAttempts <= 0 && w.Attempts > 0 {
		in.ModelAttempts = w.Attempts
	}
	if w.MaxTokens > 0 {
		// The reply cap is the worker's: re-asked cut-off tool calls
		// double the cap the worker's requests have.
		in.Limits.BaseMaxTokens = w.MaxTokens
	}
	if askedRatio(in.Compaction) > 0 && w.CompactionThreshold > 0 {
		// The model's window, as the worker that calls it knows it.
		in.Compaction.Threshold = w.CompactionThreshold
	}
	return in
}

// askedRatio is the share of the model's window a turn's compaction
// threshold is to be, when the sender left the window to the worker; 0
// when the threshold is the sender's (or compaction before a call is
// off). Pure.
func askedRatio(c CompactionSettings) float64 {
	if c.Threshold <= 0 || !(c.Ratio > 0) {
		return 0
	}
	return c.Ratio
}

// workerModelName is the model the worker would use for the turn. Pure.
func workerModelName(w *turnapi.WorkerModel) string {
	if w == nil {
		return ""
	}
	return w.Name
}

// modelUsed is the model a turn's result names: the one its last reply
// came from, else the one its input or its worker named. Pure.
func modelUsed(in TurnInput, st TurnState) string {
	if st.Model != "" {
		return st.Model
	}
	return in.Model
}
