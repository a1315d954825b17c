package gateway

// Seen is a bounded set of update ids, the oldest forgotten first: what
// an adapter acknowledged lately, so that a delivery of the same update
// again is acknowledged at once instead of taken twice. Not safe for
// concurrent use.
type Seen struct {
	// Max is how many ids it keeps (2,000 when 0).
	Max   int
	order []string
	set   map[string]bool
}

// Has reports whether id was added and not forgotten yet.
func (r *Seen) Has(id string) bool { return r.set[id] }

// Add adds id, forgetting the oldest beyond Max.
func (r *Seen) Add(id string) {
	if r.set == nil {
		r.set = map[string]bool{}
	}
	if r.set[id] {
		return
	}
	r.set[id] = true
	r.order = append(r.order, id)
	limit := r.Max
	if limit <= 0 {
		limit = 2000
	}
	if len(r.order) > limit {
		delete(r.set, r.order[0])
		r.order = r.order[1:]
	}
}
