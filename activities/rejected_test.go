package activities

import (
	"errors"
	"fmt"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/models"
)

func TestNonRetryableRejection(t *testing.T) {
	rejected := fmt.Errorf("persist reply: %w", fmt.Errorf("models: append messages: %w", models.ErrRejected))
	tests := []struct {
		name         string
		err          error
		nonRetryable bool
	}{
		{"nil", nil, false},
		{"unreachable", fmt.Errorf("models: append: %w", models.ErrUnreachable), false},
		{"other", errors.New("boom"), false},
		{"rejected", rejected, true},
		{"rejected in an application error", temporal.NewApplicationErrorWithCause("x", "t", rejected), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NonRetryableRejection(tt.err)
			var app *temporal.ApplicationError
			isNR := errors.As(got, &app) && app.NonRetryable()
			if isNR != tt.nonRetryable {
				t.Fatalf("NonRetryableRejection(%v) = %v; non-retryable %v, want %v", tt.err, got, isNR, tt.nonRetryable)
			}
			if !tt.nonRetryable && got != tt.err {
				t.Errorf("NonRetryableRejection changed %v into %v", tt.err, got)
			}
			if tt.nonRetryable && !errors.Is(got, models.ErrRejected) {
				t.Errorf("%v no longer wraps ErrRejected", got)
			}
		})
	}
}
