package activities

import (
	"testing"
	"time"
)

func TestLocalOutputPath(t *testing.T) {
	tests := []struct {
		slot time.Time
		want string
	}{
		{time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), "/h/cron/output/job/2026-03-01T09-00Z.md"},    // a scheduled slot
		{time.Date(2026, 3, 1, 9, 0, 7, 0, time.UTC), "/h/cron/output/job/2026-03-01T09-00-07Z.md"}, // a run-now slot
		{time.Date(2026, 3, 1, 10, 0, 7, 0, time.FixedZone("CET", 3600)), "/h/cron/output/job/2026-03-01T09-00-07Z.md"},
	}
	for _, tt := range tests {
		if got := LocalOutputPath("/h", "job", tt.slot); got != tt.want {
			t.Errorf("LocalOutputPath(%s) = %s, want %s", tt.slot, got, tt.want)
		}
	}
}
