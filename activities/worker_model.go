package activities

import (
	"context"

	"github.com/talaria-agent/talaria/internal/compress"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// workerModel is the worker's model configuration now; model, when not
// empty, is the name a turn asked for, which the result keeps.
func (a *Activities) workerModel(model string) turnapi.WorkerModel {
	w := turnapi.WorkerModel{Stream: a.Stream, MaxTokens: a.MaxTokens}
	if a.Worker != nil {
		w = a.Worker()
	}
	if model != "" {
		w.Name = model
	}
	return w
}

// reported is what BeginTurn tells the turn (nil when the worker has no
// model of its own to report).
func reportedWorker(w turnapi.WorkerModel) *turnapi.WorkerModel {
	if w.Name == "" && w.Timeout == 0 && w.MaxRetryAfter == 0 && w.Attempts == 0 && w.MaxTokens == 0 && w.CompactionThreshold == 0 {
		return nil
	}
	return &w
}

// withWindow is w with the context window of its model and, for a turn
// that asks for one (ratio > 0), the compaction threshold that window
// gives: ratio of the window less the reply cap (compress.Threshold). A
// turn that does not ask, or a model whose window is unknown, leaves w
// as it is.
func (a *Activities) withWindow(ctx context.Context, w turnapi.WorkerModel, ratio float64) turnapi.WorkerModel {
	if !(ratio > 0) || a.ContextWindow == nil {
		return w
	}
	if w.ContextWindow = a.ContextWindow(ctx, w.Name); w.ContextWindow > 0 {
		w.CompactionThreshold = compress.Threshold(w.ContextWindow, w.MaxTokens, ratio)
	}
	return w
}
