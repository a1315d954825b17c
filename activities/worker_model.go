package activities

import "github.com/talaria-agent/talaria/internal/turnapi"

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
	if w.Name == "" && w.Timeout == 0 && w.MaxRetryAfter == 0 && w.Attempts == 0 && w.MaxTokens == 0 {
		return nil
	}
	return &w
}
