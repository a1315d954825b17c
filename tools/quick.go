package tools

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
	if !ok {
		return false
	}
	q, ok := t.(QuickTool)
	return ok && q.Quick()
}

// Quick implements QuickTool: reading a capped file.
func (ReadFileTool) Quick() bool { return true }

// Quick implements QuickTool: writing one file.
func (WriteFileTool) Quick() bool { return true }

// Quick implements QuickTool: the list lives in the store.
func (TodoTool) Quick() bool { return true }

// Quick implements QuickTool: one locked file update.
func (MemoryTool) Quick() bool { return true }

// Quick implements QuickTool: one full-text query.
func (SessionSearchTool) Quick() bool { return true }

// Quick implements QuickTool: the answer was given before the batch runs.
func (ClarifyTool) Quick() bool { return true }
