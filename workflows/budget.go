package workflows

// IterationBudget counts the model calls a turn may make with tools.
type IterationBudget struct {
	Max  int
	Used int
}

// NewIterationBudget returns a budget of max iterations.
func NewIterationBudget(max int) IterationBudget { return IterationBudget{Max: max} }

// Consume takes one iteration, reporting false when none is left.
func (b *IterationBudget) Consume() bool {
	if b.Used >= b.Max {
		return false
	}
	b.Used++
	return true
}

// Refund gives one iteration back (for steps that should not count).
func (b *IterationBudget) Refund() {
	if b.Used > 0 {
		b.Used--
	}
}

// Remaining is the number of iterations left.
func (b IterationBudget) Remaining() int {
	if b.Used >= b.Max {
		return 0
	}
	return b.Max - b.Used
}
