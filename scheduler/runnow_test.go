package scheduler

import (
	"testing"
	"time"
)

func TestRunNowSlot(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct{ now, slot, next string }{
		{"2026-03-01T09:15:42.123Z", "2026-03-01T09:15:42Z", "2026-03-01T09:15:43Z"},
		{"2026-03-01T09:15:00.5Z", "2026-03-01T09:15:01Z", "2026-03-01T09:15:02Z"},    // never a whole minute
		{"2026-03-01T09:15:59.9Z", "2026-03-01T09:15:59Z", "2026-03-01T09:16:01Z"},    // skips 09:16:00
		{"2026-03-01T10:15:42+01:00", "2026-03-01T09:15:42Z", "2026-03-01T09:15:43Z"}, // in UTC
	}
	for _, tt := range tests {
		slot := RunNowSlot(at(tt.now))
		if !slot.Equal(at(tt.slot)) || slot.Location() != time.UTC {
			t.Errorf("RunNowSlot(%s) = %s, want %s", tt.now, slot, tt.slot)
		}
		if next := NextRunNowSlot(slot); !next.Equal(at(tt.next)) {
			t.Errorf("NextRunNowSlot(%s) = %s, want %s", slot, next, tt.next)
		}
		if !IsRunNowSlot(slot) || IsRunNowSlot(slot.Truncate(time.Minute)) {
			t.Errorf("IsRunNowSlot(%s) wrong", slot)
		}
	}
}
