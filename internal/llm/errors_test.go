package llm

import (
	"net/http"
	"testing"
	"time"
)

func TestClassifyStatus(t *testing.T) {
	tests := []struct {
		status  int
		message string
		want    Class
	}{
		{429, "Rate limit reached", ClassRateLimit},
		{429, "You exceeded your current quota: insufficient_quota", ClassBilling},
		{402, "payment required", ClassBilling},
		{401, "invalid api key", ClassAuth},
		{403, "forbidden", ClassAuth},
		{404, "The model `x` does not exist", ClassModelNotFound},
		{400, "model_not_found", ClassModelNotFound},
		{413, "request too large", ClassContextOverflow},
		{400, "This model's maximum context length is 8192 tokens", ClassContextOverflow},
		{400, "context_length_exceeded", ClassContextOverflow},
		{400, "invalid tool schema", ClassBadRequest},
		{422, "unprocessable", ClassBadRequest},
		{500, "internal error", ClassServer},
		{502, "bad gateway", ClassServer},
		{503, "service unavailable", ClassOverloaded},
		{529, "overloaded_error", ClassOverloaded},
		{504, "gateway timeout", ClassTimeout},
		{408, "request timeout", ClassTimeout},
	}
	for _, tt := range tests {
		if got := classifyStatus(tt.status, tt.message, "", ""); got != tt.want {
			t.Errorf("classifyStatus(%d, %q) = %s, want %s", tt.status, tt.message, got, tt.want)
		}
	}
}

func TestClassRetryable(t *testing.T) {
	retryable := map[Class]bool{
		ClassRateLimit: true, ClassOverloaded: true, ClassServer: true, ClassTimeout: true, ClassNetwork: true,
		ClassAuth: false, ClassBilling: false, ClassContextOverflow: false, ClassModelNotFound: false,
		ClassBadRequest: false, ClassCancelled: false,
	}
	for c, want := range retryable {
		if c.Retryable() != want {
			t.Errorf("%s.Retryable() = %v, want %v", c, !want, want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
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
