package workflows

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
)

func TestModelFailureStop(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		reason StopReason
		in     string
	}{
		{"cut-off reply", temporal.NewApplicationError("model call failed (truncated_reply): the reply was cut off", "truncated_reply"),
			StopTruncated, "reply was cut off before it finished, on every attempt: model call failed (truncated_reply)"},
		{"not the protocol", temporal.NewNonRetryableApplicationError("model call failed (invalid_response, HTTP 200): it begins: <html>", "invalid_response", nil),
			StopError, "invalid_response"},
		{"other failure", errors.New("boom"), StopError, "boom"},
		{"no decoration", temporal.NewApplicationError("model call failed (server_error, HTTP 500): down", "server_error"), StopError, "HTTP 500): down"},
	}
	for _, tt := range tests {
		reason, msg := modelFailureStop(tt.err)
		if reason != tt.reason || !strings.Contains(msg, tt.in) || strings.Contains(msg, "retryable:") {
			t.Errorf("%s: %s %q", tt.name, reason, msg)
		}
	}
}

func TestModelCallLimit(t *testing.T) {
	if modelCallLimit(5*time.Minute) != minModelCallLimit || modelCallLimit(2*minModelCallLimit) != 4*minModelCallLimit {
		t.Fatal("the wall-clock bound is at least an hour and twice the idle timeout")
	}
}
