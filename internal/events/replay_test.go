package events

import (
	"encoding/json"
	"testing"
)

func attemptData(call, attempt int) string {
	b, _ := json.Marshal(AttemptEvent{Call: call, Attempt: attempt})
	return string(b)
}

// TestShown: what an append-only door shows of each event, across calls
// and retried attempts.
func TestShown(t *testing.T) {
	t.Parallel()
	type step struct {
		attempt   [2]int // call, attempt; zero: a delta
		delta     string
		show      string
		restarted bool
	}
	a := func(call, n int) step { return step{attempt: [2]int{call, n}} }
	d := func(text, show string) step { return step{delta: text, show: show} }
	for _, tt := range []struct {
		name  string
		steps []step
	}{
		{"one attempt shows everything", []step{a(1, 1), d("Hel", "Hel"), d("lo", "lo")}},
		{"a retry retraces and goes on", []step{a(1, 1), d("Hello, wo", "Hello, wo"), a(1, 2), d("Hel", ""), d("lo, world", "rld"), d("!", "!")}},
		{"a retry split differently", []step{a(1, 1), d("ab", "ab"), d("cd", "cd"), a(1, 2), d("abc", ""), d("def", "ef")}},
		{"a retry that differs restarts", []step{a(1, 1), d("Hello", "Hello"), a(1, 2), {delta: "Help", show: "Help", restarted: true}, d("!", "!")}},
		{"a restart keeps what matched", []step{a(1, 1), d("Hello", "Hello"), a(1, 2), d("He", ""), {delta: "y", show: "Hey", restarted: true}}},
		{"a next call appends", []step{a(1, 1), d("one", "one"), a(2, 1), d("one", "one")}},
		{"a retry before any text", []step{a(1, 1), a(1, 2), d("x", "x")}},
		{"no attempts at all", []step{d("x", "x"), d("y", "y")}},
		{"multi-byte runes are not split", []step{a(1, 1), d("é", "é"), a(1, 2), {delta: "è", show: "è", restarted: true}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s Shown
			for i, st := range tt.steps {
				if st.attempt != [2]int{} {
					s.Attempt(attemptData(st.attempt[0], st.attempt[1]))
					continue
				}
				show, restarted := s.Delta(st.delta)
				if show != st.show || restarted != st.restarted {
					t.Fatalf("step %d: Delta(%q) = %q, %v; want %q, %v", i, st.delta, show, restarted, st.show, st.restarted)
				}
			}
		})
	}
}
