package engine

import (
	"fmt"

	"go.temporal.io/sdk/worker"
)

// PauseWork stops the turn worker's polling, so this process takes no
// workflow or activity task until ResumeWork. The Temporal SDK cannot pause
// a worker: it is stopped, and ResumeWork starts a new one with the same
// registration. Activities in flight are cancelled by the stop; Temporal
// retries them on whichever worker polls next. Tasks scheduled meanwhile
// wait in their queue: turns have no schedule-to-start limit. It reports
// whether it paused (false: already paused). Without a worker it only
// marks work paused, which pauses the scheduler's ticks.
func (rt *Runtime) PauseWork() bool {
	rt.workMu.Lock()
	defer rt.workMu.Unlock()
	if rt.paused {
		return false
	}
	if rt.Worker != nil {
		rt.Worker.Stop()
		rt.Worker = nil
	}
	rt.paused = true
	return true
}

// ResumeWork starts a new turn worker after PauseWork. It does nothing when
// work is not paused. On error work stays paused and ResumeWork may be
// called again.
func (rt *Runtime) ResumeWork() error {
	rt.workMu.Lock()
	defer rt.workMu.Unlock()
	if !rt.paused {
		return nil
	}
	if rt.newWorker != nil {
		w := rt.newWorker()
		if err := w.Start(); err != nil {
			return fmt.Errorf("start the worker again: %w", err)
		}
		rt.Worker = w
	}
	rt.paused = false
	return nil
}

// WorkPaused reports whether PauseWork holds the worker stopped.
func (rt *Runtime) WorkPaused() bool {
	rt.workMu.Lock()
	defer rt.workMu.Unlock()
	return rt.paused
}

// currentWorker is the worker polling now (nil while paused or in a client).
func (rt *Runtime) currentWorker() worker.Worker {
	rt.workMu.Lock()
	defer rt.workMu.Unlock()
	return rt.Worker
}
