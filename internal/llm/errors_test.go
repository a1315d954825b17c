package llm

import (
	"net/http"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

func TestClassifyStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status  int
		message string
		want    turnapi.ErrorClass
	}{
		{429, "Rate limit reached", turnapi.ClassRateLimit},
		{429, "You exceeded your current quota: insufficient_quota", turnapi.ClassBilling},
		{402, "payment required", turnapi.ClassBilling},
		{401, "invalid api key", turnapi.ClassAuth},
		{403, "forbidden", turnapi.ClassAuth},
		{404, "The model `x` does not exist", turnapi.ClassModelNotFound},
		{400, "model_not_found", turnapi.ClassModelNotFound},
		{413, "request too large", turnapi.ClassContextOverflow},
		{400, "This model's maximum context length is 8192 tokens", turnapi.ClassContextOverflow},
		{400, "context_length_exceeded", turnapi.ClassContextOverflow},
		{400, "invalid tool schema", turnapi.ClassBadRequest},
		{422, "unprocessable", turnapi.ClassBadRequest},
		{500, "internal error", turnapi.ClassServer},
		{502, "bad gateway", turnapi.ClassServer},
		{503, "service unavailable", turnapi.ClassOverloaded},
		{529, "overloaded_error", turnapi.ClassOverloaded},
		{504, "gateway timeout", turnapi.ClassTimeout},
		{408, "request timeout", turnapi.ClassTimeout},
	}
	for _, tt := range tests {
		if got := classifyStatus(tt.status, tt.message, "", ""); got != tt.want {
			t.Errorf("classifyStatus(%d, %q) = %s, want %s", tt.status, tt.message, got, tt.want)
		}
	}
}

func TestClassRetryable(t *testing.T) {
	t.Parallel()
	retryable := map[turnapi.ErrorClass]bool{
		turnapi.ClassRateLimit: true, turnapi.ClassOverloaded: true, turnapi.ClassServer: true, turnapi.ClassTimeout: true, turnapi.ClassNetwork: true,
		turnapi.ClassAuth: false, turnapi.ClassBilling: false, turnapi.ClassContextOverflow: false, turnapi.ClassModelNotFound: false,
		turnapi.ClassBadRequest: false, turnapi.ClassCancelled: false,
	}
	for c, want := range retryable {
		if c.Retryable() != want {
			t.Errorf("%s.Retryable() = %v, want %v", c, !want, want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"2", 2 * time.Second},
		{"0.5", 500 * time.Millisecond},
		{" 7 ", 7 * time.Second},
		{"-3", 0},
		{"soon", 0},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second},
		{now.Add(-30 * time.Second).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
