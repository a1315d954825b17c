package approval

import "slices"

// Grants remembers approvals beyond one call: Session grants live for the
// session, Always grants are kept by the caller in storage. Both are sets
// of Rule ids, sorted and without duplicates.
type Grants struct {
	Session []string `json:"session,omitempty"`
	Always  []string `json:"always,omitempty"`
}

// Allows reports whether a command may run without asking: Safe always,
// Dangerous when its rule was granted for the session or always, Blocked
// never.
func (g Grants) Allows(a Assessment) bool {
	switch a.Risk {
	case Safe:
		return true
	case Dangerous:
		return a.Rule != "" && (slices.Contains(g.Session, a.Rule) || slices.Contains(g.Always, a.Rule))
	}
	return false
}

// With returns grants that also hold rule for a Session or Always choice.
// The receiver is never modified and the result shares no memory with it;
// Once, Deny, an unknown choice or an empty rule add nothing.
func (g Grants) With(c Choice, rule string) Grants {
	out := Grants{Session: normalize(g.Session, ""), Always: normalize(g.Always, "")}
	if rule == "" {
		return out
	}
	switch c {
	case Session:
		out.Session = normalize(g.Session, rule)
	case Always:
		out.Always = normalize(g.Always, rule)
	}
	return out
}

// normalize returns a sorted copy of ids without duplicates or empty ids,
// plus extra when it is not empty; nil when nothing is left.
func normalize(ids []string, extra string) []string {
	out := make([]string, 0, len(ids)+1)
	for _, id := range ids {
		if id != "" {
			out = append(out, id)
		}
	}
	if extra != "" {
		out = append(out, extra)
	}
	if len(out) == 0 {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}
