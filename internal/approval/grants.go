package approval

import "slices"

// Grants remembers approvals beyond one call: Session grants live for the
// session, Always grants are kept by the caller in storage. Both are sorted
// sets without duplicates of grant keys (see [Assessment.GrantKey]):
// "cmd:"-prefixed command patterns, or the rule ids older grants held.
type Grants struct {
	Session []string `json:"session,omitempty"`
	Always  []string `json:"always,omitempty"`
}

// Allows reports whether a command may run without asking: Safe always,
// Blocked never, Dangerous when its grant key was granted for the session
// or always. An assessment with a Pattern matches only a grant of exactly
// that pattern, so rule ids granted by older versions do not cover it; one
// without a Pattern (recorded before patterns existed) matches its rule id.
func (g Grants) Allows(a Assessment) bool {
	if a.Risk == Safe {
		return true
	}
	if a.Risk != Dangerous {
		return false
	}
	key := a.GrantKey()
	return key != "" && (slices.Contains(g.Session, key) || slices.Contains(g.Always, key))
}

// With returns grants that also hold key (an [Assessment.GrantKey]) for a
// Session or Always choice. The receiver is never modified and the result
// shares no memory with it; Once, Deny, an unknown choice or an empty key
// add nothing.
func (g Grants) With(c Choice, key string) Grants {
	out := Grants{Session: normalize(g.Session, ""), Always: normalize(g.Always, "")}
	if key == "" {
		return out
	}
	switch c {
	case Session:
		out.Session = normalize(g.Session, key)
	case Always:
		out.Always = normalize(g.Always, key)
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
