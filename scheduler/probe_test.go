package scheduler

import (
	"testing"
	"time"
)

func TestProbe(t *testing.T) {
	for _, c := range []struct{ spec, tz string; from string }{
		{"30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z"},
		{"30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z"},
		{"30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z"},
		{"30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z"},
		{"*/30 * * * *", "America/New_York", "2026-11-01T04:00:00Z"},
		{"30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z"},
	} {
		s, err := ParseSchedule(c.spec, c.tz, time.Now(), time.Now())
		if err != nil { t.Fatal(err) }
		tt, _ := time.Parse(time.RFC3339, c.from)
		for i := 0; i < 6; i++ {
			tt = s.Next(tt)
			loc, _ := time.LoadLocation(c.tz)
			t.Logf("%s %s: %s  (%s)", c.spec, c.tz, tt, tt.In(loc))
		}
	}
}
