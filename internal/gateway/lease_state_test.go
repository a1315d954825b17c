package gateway

import (
	"errors"
	"testing"
	"time"
)

func TestLeaseState(t *testing.T) {
	t.Parallel()
	down := errors.New("database is locked")
	for _, tt := range []struct {
		name  string
		held  bool
		err   error
		since time.Duration
		want  leaseRenewal
	}{
		{"renewed", true, nil, leaseRenew, leaseHeld},
		{"another holds it", false, nil, leaseRenew, leaseTaken},
		{"store down, lease still ours", false, down, leaseTTL - time.Second, leaseUnsure},
		{"store down past the lease's life", false, down, leaseTTL, leaseExpired},
	} {
		if got := leaseState(tt.held, tt.err, tt.since); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}
