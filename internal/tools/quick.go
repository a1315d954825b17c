package tools

import "time"

// QuickTimeout bounds one call of a quick tool (see QuickTool). A call that
// has not finished by then is answered with a "timed out" error and
// abandoned: the batch goes on without it, even when the tool is stuck in a
// system call that ignores cancellation. Registry.WithQuickTimeout changes
// it for one registry.
const QuickTimeout = 10 * time.Second

// QuickTool is implemented by tools that finish in milliseconds on the
// worker's own resources: no subprocess, no network, no waiting for a human.
// The engine runs a batch made only of quick calls inside the workflow task
// (a Temporal local activity) instead of as a separate activity, saving a
// server round trip per loop iteration. The claim/result records that make
// tool effects exactly-once apply to both paths alike.
type QuickTool interface {
	Quick() bool
}

// Quick reports whether the named tool is registered and quick.
func (r *Registry) Quick(name string) bool {
	t, ok := r.tools[name]
	return ok && isQuick(t)
}

// IsQuick reports whether t is a quick tool.
func IsQuick(t Tool) bool { return isQuick(t) }

func isQuick(t Tool) bool {
	q, ok := t.(QuickTool)
	return ok && q.Quick()
}

// WithQuickTimeout returns a copy of the registry whose quick tools run
// under limit instead of QuickTimeout; 0 or less restores QuickTimeout.
func (r *Registry) WithQuickTimeout(limit time.Duration) *Registry {
	c := *r
	c.quickTimeout = limit
	return &c
}

// deadline is how long a call of t may run before it is abandoned; 0 means
// no limit of the registry's own (the tool bounds itself, as the terminal
// does with its timeout argument).
func (r *Registry) deadline(t Tool) time.Duration {
	if !isQuick(t) {
		return 0
	}
	if r.quickTimeout > 0 {
		return r.quickTimeout
	}
	return QuickTimeout
}
