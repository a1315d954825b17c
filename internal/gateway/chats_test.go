package gateway

import (
	"regexp"
	"testing"
	"time"
)

func TestResetDue(t *testing.T) {
	utc := time.UTC
	day := func(d, h, m int) time.Time { return time.Date(2026, 3, d, h, m, 0, 0, utc) }
	for _, tt := range []struct {
		name      string
		policy    ResetPolicy
		last, now time.Time
		want      bool
	}{
		{"first message", DefaultReset, time.Time{}, day(1, 9, 0), false},
		{"same morning", ResetPolicy{DailyHour: 4, Location: utc}, day(1, 5, 0), day(1, 9, 0), false},
		{"across 04:00", ResetPolicy{DailyHour: 4, Location: utc}, day(1, 3, 59), day(1, 4, 1), true},
		{"late evening to early morning", ResetPolicy{DailyHour: 4, Location: utc}, day(1, 22, 0), day(2, 3, 0), false},
		{"yesterday afternoon to now", ResetPolicy{DailyHour: 4, Location: utc}, day(1, 15, 0), day(2, 9, 0), true},
		{"idle 24h", ResetPolicy{DailyHour: -1, Idle: 24 * time.Hour}, day(1, 9, 0), day(2, 9, 0), true},
		{"idle 23h", ResetPolicy{DailyHour: -1, Idle: 24 * time.Hour}, day(1, 9, 0), day(2, 8, 0), false},
		{"never", ResetPolicy{DailyHour: -1}, day(1, 9, 0), day(9, 9, 0), false},
	} {
		if got := tt.policy.due(tt.last, tt.now); got != tt.want {
			t.Errorf("%s: due = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestGenerationID(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$`)
	for _, key := range []string{"telegram:dm:42", "slack:group:C1:1700.1:U1", "telegram:dm:" + string(make([]byte, 0)) + "9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"} {
		seen := map[string]bool{}
		for n := range 3 {
			id := generationID(key, n)
			if !valid.MatchString(id) || seen[id] {
				t.Errorf("generationID(%q, %d) = %q", key, n, id)
			}
			seen[id] = true
		}
	}
	if got := generationID("telegram:dm:42", 2); got != "telegram.dm.42-g2" {
		t.Errorf("generation 2 = %q", got)
	}
}
