package fakewire

import (
	"context"
	"net/http"
	"sync"
)

// Hold keeps the calls of one route unanswered: the first n pass, the
// ones after them wait until Release. A held call whose client goes away
// (a process killed) is dropped: the fake never takes it, as if it was
// lost on the way. The zero Hold holds nothing.
type Hold struct {
	mu      sync.Mutex
	route   string
	pass    int
	held    int
	release chan struct{}
}

// After lets the next n calls of route through and holds the ones after
// them until Release. One route is held at a time.
func (h *Hold) After(route string, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.release != nil {
		close(h.release)
	}
	h.route, h.pass, h.release = route, n, make(chan struct{})
}

// Held is how many calls are held now.
func (h *Hold) Held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

// WaitHeld waits until ok holds for the number of held calls, or ctx ends.
func (h *Hold) WaitHeld(ctx context.Context, ok func(int) bool) (int, error) {
	return Wait(ctx, h.Held, ok)
}

// Release ends the hold: the held calls go on, and later ones pass.
func (h *Hold) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.release != nil {
		close(h.release)
		h.release, h.route = nil, ""
	}
}

// Admit holds a call of route when it is due to be held, and reports
// whether it goes on (false: its client went away meanwhile). Call it
// after reading the request's body: only then does the server notice a
// client that went away.
func (h *Hold) Admit(r *http.Request, route string) bool {
	h.mu.Lock()
	release := h.release
	if release == nil || h.route != route {
		h.mu.Unlock()
		return true
	}
	if h.pass > 0 {
		h.pass--
		h.mu.Unlock()
		return true
	}
	h.held++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.held--
		h.mu.Unlock()
	}()
	select {
	case <-release:
		return true
	case <-r.Context().Done():
		return false
	}
}
