package workflows

import (
	"testing"
	"time"
)

// TestCompactionHasAModelCallsBound: a compaction's summary is a model call
// whose time without progress is ModelTimeout, so the activity gets the
// same wall-clock bound as a model call, never ModelTimeout itself.
func TestCompactionHasAModelCallsBound(t *testing.T) {
	for _, idle := range []time.Duration{time.Second, 5 * time.Minute, 10 * time.Minute, 3 * time.Hour} {
		got := compactActivityOptions(TurnInput{ModelTimeout: idle, HeartbeatTimeout: 10 * time.Second})
		if got.StartToCloseTimeout != modelCallLimit(idle) || got.StartToCloseTimeout < 2*idle {
			t.Errorf("idle %s: compaction bound %s, want %s", idle, got.StartToCloseTimeout, modelCallLimit(idle))
		}
		if got.HeartbeatTimeout != 10*time.Second || got.RetryPolicy == nil || got.RetryPolicy.MaximumAttempts != 3 {
			t.Errorf("idle %s: heartbeat %s, retry %+v", idle, got.HeartbeatTimeout, got.RetryPolicy)
		}
	}
}
