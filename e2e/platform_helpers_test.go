package e2e

import (
	"testing"
	"time"
)

// waitOne waits until one of the messages sent returns is one match
// accepts, and returns it; the test fails after within, naming what it
// waited for.
func waitOne[M any](t *testing.T, what string, sent func() []M, match func(M) bool, within time.Duration) M {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		for _, m := range sent() {
			if match(m) {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s; sent:\n%+v", what, within, sent())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// textsOf is the text of each message match accepts, in order.
func textsOf[M any](ms []M, match func(M) bool, text func(M) string) []string {
	var out []string
	for _, m := range ms {
		if match(m) {
			out = append(out, text(m))
		}
	}
	return out
}
