package scheduler

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// nextSlots returns the first n slots after from, in UTC RFC 3339.
func nextSlots(s Schedule, from time.Time, n int) []string {
	var out []string
	for t := s.Next(from); !t.IsZero() && len(out) < n; t = s.Next(t) {
		out = append(out, t.Format(time.RFC3339))
	}
	return out
}

func TestParseScheduleValid(t *testing.T) {
	now := mustTime(t, "2026-05-01T10:00:20Z") // a Friday
	tests := []struct {
		name, spec, tz string
		from           string // defaults to now
		want           []string
		text           string
	}{
		{name: "cron in UTC", spec: "30 2 * * *", want: []string{"2026-05-02T02:30:00Z", "2026-05-03T02:30:00Z"}, text: "30 2 * * *"},
		{name: "every 15 minutes", spec: "*/15 * * * *", want: []string{"2026-05-01T10:15:00Z", "2026-05-01T10:30:00Z"}},
		{name: "weekdays", spec: "0 9 * * MON-FRI", want: []string{"2026-05-04T09:00:00Z", "2026-05-05T09:00:00Z"}},
		{name: "tz argument", spec: "0 9 * * *", tz: "Asia/Tokyo", want: []string{"2026-05-02T00:00:00Z", "2026-05-03T00:00:00Z"},
			text: "CRON_TZ=Asia/Tokyo 0 9 * * *"},
		{name: "CRON_TZ prefix", spec: "CRON_TZ=America/New_York 0 9 * * *", want: []string{"2026-05-01T13:00:00Z", "2026-05-02T13:00:00Z"}},
		{name: "TZ prefix equal to tz", spec: "TZ=Europe/Berlin 0 9 * * *", tz: "Europe/Berlin", want: []string{"2026-05-02T07:00:00Z"}},
		{name: "hourly", spec: "@hourly", want: []string{"2026-05-01T11:00:00Z", "2026-05-01T12:00:00Z"}},
		{name: "daily in Berlin", spec: "@daily", tz: "Europe/Berlin", want: []string{"2026-05-01T22:00:00Z"}},
		{name: "midnight", spec: "@midnight", want: []string{"2026-05-02T00:00:00Z"}},
		{name: "weekly", spec: "@weekly", want: []string{"2026-05-03T00:00:00Z"}},
		{name: "monthly", spec: "@monthly", want: []string{"2026-06-01T00:00:00Z"}},
		{name: "yearly", spec: "@yearly", want: []string{"2027-01-01T00:00:00Z"}},
		{name: "every 2h from the anchor's minute", spec: "every 2h",
			want: []string{"2026-05-01T12:00:00Z", "2026-05-01T14:00:00Z"}, text: "every 2h"},
		{name: "@every 90m", spec: "@every 90m", want: []string{"2026-05-01T11:30:00Z", "2026-05-01T13:00:00Z"}, text: "every 1h30m"},
		{name: "every from later", spec: "every 2h", from: "2026-05-03T13:59:00Z", want: []string{"2026-05-03T14:00:00Z"}},
		{name: "in 30m rounds up", spec: "in 30m", want: []string{"2026-05-01T10:31:00Z"}, text: "2026-05-01T10:31:00Z"},
		{name: "in 1h30m", spec: "IN 1h30m", want: []string{"2026-05-01T11:31:00Z"}},
		{name: "timestamp", spec: "2026-05-01T14:00:00+02:00", want: []string{"2026-05-01T12:00:00Z"}},
		{name: "timestamp with seconds", spec: "2026-05-01T12:00:01Z", want: []string{"2026-05-01T12:01:00Z"}},
		{name: "one-shot already past", spec: "in 5m", from: "2026-05-01T10:06:00Z", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSchedule(tt.spec, tt.tz, now, now)
			if err != nil {
				t.Fatalf("ParseSchedule(%q, %q): %v", tt.spec, tt.tz, err)
			}
			from := now
			if tt.from != "" {
				from = mustTime(t, tt.from)
			}
			got := nextSlots(s, from, len(tt.want))
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("slots after %s = %v, want %v", from.Format(time.RFC3339), got, tt.want)
			}
			if tt.text != "" && s.String() != tt.text {
				t.Errorf("String() = %q, want %q", s.String(), tt.text)
			}
			// String is a spec ParseSchedule reads back to the same slots.
			again, err := ParseSchedule(s.String(), "", now, now)
			if err != nil {
				t.Fatalf("ParseSchedule(String() = %q): %v", s.String(), err)
			}
			if g := nextSlots(again, from, len(tt.want)); strings.Join(g, " ") != strings.Join(got, " ") {
				t.Errorf("re-parsed %q: slots %v, want %v", s.String(), g, got)
			}
		})
	}
}

func TestParseScheduleInvalid(t *testing.T) {
	now := mustTime(t, "2026-05-01T10:00:20Z")
	tests := []struct {
		name, spec, tz string
		says           string // part of the message
	}{
		{"empty", "  ", "", "empty schedule"},
		{"four fields", "0 9 * *", "", "five fields"},
		{"six fields", "0 0 9 * * *", "", "five fields"},
		{"out of range", "61 * * * *", "", "five fields"},
		{"zero step", "*/0 * * * *", "", "for example"},
		{"garbage", "whenever", "", "for example"},
		{"unknown descriptor", "@fortnightly", "", "for example"},
		{"never due", "0 0 30 2 *", "", "never comes due"},
		{"unknown zone", "0 9 * * *", "Mars/Olympus", "unknown time zone"},
		{"Local zone", "0 9 * * *", "Local", "unknown time zone"},
		{"unknown prefix zone", "CRON_TZ=Nowhere/City 0 9 * * *", "", "unknown time zone"},
		{"prefix without expression", "CRON_TZ=Europe/Berlin", "", "needs a zone and an expression"},
		{"prefix without zone", "CRON_TZ= 0 9 * * *", "", "needs a zone and an expression"},
		{"conflicting zones", "CRON_TZ=Europe/Berlin 0 9 * * *", "Asia/Tokyo", "give one of them"},
		{"interval not a duration", "every day", "", "not a duration"},
		{"interval too short", "every 30s", "", "at least 1m0s"},
		{"interval negative", "@every -5m", "", "at least"},
		{"interval fraction of a minute", "every 90s", "", "whole number of minutes"},
		{"interval empty", "every ", "", "for example"},
		{"in not a duration", "in a while", "", "not a duration"},
		{"in too soon", "in 10s", "", "at least 1m"},
		{"timestamp malformed", "2026-13-01T10:00:00Z", "", "RFC 3339"},
		{"timestamp without zone", "2026-05-01T12:00:00", "", "RFC 3339"},
		{"timestamp past", "2026-05-01T09:00:00Z", "", "not in the future"},
		{"timestamp now", "2026-05-01T10:00:20Z", "", "not in the future"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSchedule(tt.spec, tt.tz, now, now)
			if !errors.Is(err, ErrInvalidSchedule) {
				t.Fatalf("ParseSchedule(%q, %q) = %v, %v; want ErrInvalidSchedule", tt.spec, tt.tz, s, err)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
			if !strings.Contains(err.Error(), "for example") && !strings.Contains(err.Error(), "such as") && !strings.Contains(err.Error(), "give one") {
				t.Errorf("error %q shows no valid example", err)
			}
		})
	}
}

// TestScheduleDST checks daily jobs across daylight-saving transitions: a
// slot whose wall-clock time is skipped runs right after the jump, and one
// whose time repeats runs once.
func TestScheduleDST(t *testing.T) {
	anchor := mustTime(t, "2026-01-01T00:00:00Z")
	tests := []struct {
		name, spec, tz, from string
		want                 []string // local times
	}{
		{"Berlin spring forward: 02:30 runs at 03:00", "30 2 * * *", "Europe/Berlin", "2026-03-27T12:00:00Z",
			[]string{"2026-03-28T02:30:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"New York spring forward", "30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"spring forward does not touch other times", "30 3 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T03:30:00+02:00", "2026-03-30T03:30:00+02:00"}},
		{"quarter hours in the skipped hour run once", "*/15 * * * *", "Europe/Berlin", "2026-03-29T00:40:00Z",
			[]string{"2026-03-29T01:45:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-29T03:15:00+02:00"}},
		{"New York fall back: 01:30 runs once", "30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"Berlin fall back: 02:30 runs once", "30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		{"half hours in the repeated hour run once", "*/30 * * * *", "America/New_York", "2026-11-01T04:50:00Z",
			[]string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T02:00:00-05:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSchedule(tt.spec, tt.tz, anchor, anchor)
			if err != nil {
				t.Fatal(err)
			}
			loc, _ := time.LoadLocation(tt.tz)
			var got []string
			for _, slot := range nextSlots(s, mustTime(t, tt.from), len(tt.want)) {
				got = append(got, mustTime(t, slot).In(loc).Format(time.RFC3339))
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("slots = %v, want %v", got, tt.want)
			}
		})
	}
}
