package events

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLaterAttemptSupersedesPublisher: once a later attempt of the same
// model call has published, the earlier attempt's publisher writes nothing
// more and says it is superseded; a publisher of the next call is not
// affected by either.
func TestLaterAttemptSupersedesPublisher(t *testing.T) {
	t.Parallel()
	st := openStore(t, filepath.Join(t.TempDir(), "talaria.db"))
	const turn = "turn/s/1"
	first := NewPublisher(st, turn, WithAttempt(1, 1), WithFlushEvery(time.Millisecond))
	first.Publish(KindDelta, "a")
	stored := func() string {
		evs, err := st.EventsAfter(t.Context(), turn, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, e := range evs {
			parts = append(parts, e.Kind+":"+e.Data)
		}
		return strings.Join(parts, " ")
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(stored(), "delta:a") {
		if time.Now().After(deadline) {
			t.Fatalf("the first attempt's delta was never written: %s", stored())
		}
		time.Sleep(5 * time.Millisecond)
	}
	second := NewPublisher(st, turn, WithAttempt(1, 2))
	second.Publish(KindDelta, "b")
	if err := second.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	first.Publish(KindDelta, "c")
	_ = first.Close(t.Context())
	if !first.Superseded() || second.Superseded() {
		t.Errorf("superseded: first %v, second %v", first.Superseded(), second.Superseded())
	}
	next := NewPublisher(st, turn, WithAttempt(2, 1))
	next.Publish(KindDelta, "d")
	if err := next.Close(t.Context()); err != nil || next.Superseded() {
		t.Errorf("the next call's publisher: %v, superseded %v", err, next.Superseded())
	}
	want := `attempt:{"call":1,"attempt":1} delta:a attempt:{"call":1,"attempt":2} delta:b attempt:{"call":2,"attempt":1} delta:d`
	if got := stored(); got != want {
		t.Errorf("stored events:\n got %s\nwant %s", got, want)
	}
}
