package gateway

import (
	"slices"
	"sync"
	"time"
)

// Access decides who reaches the agent: only the allowed users (an empty
// list allows nobody, unless AllowAll). Others get one polite refusal at
// most every RefusalEvery per user, and cause no model call.
type Access struct {
	Users    []string
	AllowAll bool

	mu      sync.Mutex
	refused map[string]time.Time
}

// Refusal is what a stranger is told.
const Refusal = "Sorry, this assistant only talks to the people its owner allowed. " +
	"If that should include you, ask its owner for a pairing code and send it here as /pair CODE."

// Allowed reports whether user may reach the agent.
func (a *Access) Allowed(user string) bool {
	if user == "" {
		return false
	}
	return a.AllowAll || slices.Contains(a.Users, user)
}

// ShouldRefuse reports whether a stranger is due a refusal now (the
// first time, and once per ten minutes after), recording it.
func (a *Access) ShouldRefuse(user string, now time.Time) bool {
	const every = 10 * time.Minute
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refused == nil {
		a.refused = map[string]time.Time{}
	}
	if last, ok := a.refused[user]; ok && now.Sub(last) < every {
		return false
	}
	// Bounded: a flood of strangers does not grow the map for ever.
	if len(a.refused) >= 10000 {
		for u, t := range a.refused {
			if now.Sub(t) >= every {
				delete(a.refused, u)
			}
		}
		if len(a.refused) >= 10000 {
			return false
		}
	}
	a.refused[user] = now
	return true
}
