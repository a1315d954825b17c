package scheduler

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// ErrInvalidSchedule reports a schedule specification that ParseSchedule
// cannot accept; the wrapping error says what is wrong and shows a valid
// example.
var ErrInvalidSchedule = errors.New("invalid schedule")

// Schedule yields the slots of a job: the whole minutes, in UTC, at which
// it is due.
type Schedule interface {
	// Next returns the first slot strictly after t, in UTC, or the zero
	// time when there is none (a one-shot already past).
	Next(t time.Time) time.Time
	// String describes the schedule in a form ParseSchedule accepts.
	String() string
}

// MinInterval is the shortest interval of an "every" schedule.
const MinInterval = time.Minute

// cronParser reads the five standard fields and the @ descriptors.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule parses the schedule of a job created at anchor, as of now.
//
// It accepts:
//
//   - a cron expression of five fields, "30 2 * * *", optionally preceded by
//     "CRON_TZ=Area/City " (or "TZ=Area/City "); without the prefix the time
//     zone is tz, and UTC when tz is empty. A prefix and a different tz is an
//     error.
//   - a descriptor: "@hourly", "@daily", "@midnight", "@weekly", "@monthly",
//     "@yearly" (also "@annually"), in the same time zone.
//   - an interval, "every 2h" or "@every 90m": slots anchor+k·interval,
//     anchor truncated to the minute. The interval is a whole number of
//     minutes, at least MinInterval.
//   - a one-shot: "in 30m" (one slot at now+30m) or an RFC 3339 timestamp
//     "2030-01-02T15:04:05+01:00", rounded up to the minute and after now.
//
// A job's schedule is re-parsed with now = anchor = the job's creation
// time, so relative one-shots keep their slot.
//
// Invalid input yields an error wrapping ErrInvalidSchedule.
func ParseSchedule(spec, tz string, now, anchor time.Time) (s Schedule, err error) {
	spec = strings.TrimSpace(spec)
	tz = strings.TrimSpace(tz)
	if spec == "" {
		return nil, invalid("empty schedule; for example \"0 9 * * *\" (09:00 every day), \"every 2h\" or \"in 30m\"")
	}
	lower := strings.ToLower(spec)
	switch {
	case strings.HasPrefix(lower, "every ") || strings.HasPrefix(lower, "@every "):
		_, d, _ := strings.Cut(spec, " ")
		return parseInterval(spec, strings.TrimSpace(d), anchor)
	case strings.HasPrefix(lower, "in "):
		return parseIn(spec, strings.TrimSpace(spec[3:]), now)
	case spec[0] >= '0' && spec[0] <= '9' && !strings.ContainsAny(spec, " \t"):
		return parseAt(spec, now)
	}
	return parseCron(spec, tz)
}

// invalid builds an error wrapping ErrInvalidSchedule.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidSchedule}, args...)...)
}

// parseCron parses a cron expression or a descriptor, with its time zone.
func parseCron(spec, tz string) (s Schedule, err error) {
	expr := spec
	zone := ""
	for _, prefix := range []string{"CRON_TZ=", "TZ="} {
		if strings.HasPrefix(expr, prefix) {
			var rest string
			zone, rest, _ = strings.Cut(expr[len(prefix):], " ")
			expr = strings.TrimSpace(rest)
			if zone == "" || expr == "" {
				return nil, invalid("%q: a time zone prefix needs a zone and an expression, for example \"CRON_TZ=Europe/Berlin 30 2 * * *\"", spec)
			}
			break
		}
	}
	if zone != "" && tz != "" && zone != tz {
		return nil, invalid("%q names time zone %s but the job's time zone is %s; give one of them", spec, zone, tz)
	}
	zone = cmp.Or(zone, tz)
	loc := time.UTC
	if zone != "" {
		loc, err = time.LoadLocation(zone)
		if err != nil || zone == "Local" {
			return nil, invalid("unknown time zone %q; use an IANA name such as \"Europe/Berlin\" or \"America/New_York\"", zone)
		}
	}

	parsed, err := parseStandard(expr)
	if err != nil {
		return nil, invalid("%q: %v; a cron expression has five fields, minute hour day-of-month month day-of-week, for example \"30 2 * * *\" (02:30 every day) or \"@daily\"", spec, err)
	}
	spec5, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return nil, invalid("%q: unsupported form; for example \"30 2 * * *\" or \"every 2h\"", spec)
	}
	spec5.Location = loc
	wall := *spec5
	wall.Location = time.UTC
	c := &cronSchedule{spec: spec5, wall: &wall, loc: loc, text: expr}
	if zone != "" {
		c.text = "CRON_TZ=" + zone + " " + expr
	}
	if c.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() && c.Next(time.Now()).IsZero() {
		return nil, invalid("%q never comes due; check the day and month fields, for example \"0 0 29 2 *\" (29 February)", spec)
	}
	return c, nil
}

// parseStandard runs the cron parser, turning a panic on malformed input
// into an error.
func parseStandard(expr string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("malformed expression")
		}
	}()
	return cronParser.Parse(expr)
}

// cronSchedule is a cron expression evaluated in a time zone.
type cronSchedule struct {
	spec *cron.SpecSchedule
	wall *cron.SpecSchedule // the same expression on a zone-free wall clock (UTC)
	loc  *time.Location
	text string
}

// Next returns the first matching minute after t. A wall-clock minute that
// a fall-back transition repeats runs once, at its first occurrence; a
// minute that a spring-forward transition skips runs at the first minute
// after the transition.
func (c *cronSchedule) Next(t time.Time) time.Time {
	t = t.In(c.loc)
	next := c.spec.Next(t)
	if next.IsZero() {
		return time.Time{}
	}
	if gap := c.skippedSlot(t, next); !gap.IsZero() {
		return gap.UTC()
	}
	// A repeated wall-clock minute: the second occurrence of a slot the
	// first occurrence of which is at or before t.
	for {
		wall := wallTime(next)
		first := firstOccurrence(wall, c.loc)
		if first.Equal(next) || first.After(t) {
			break
		}
		next = c.spec.Next(next)
		if next.IsZero() {
			return time.Time{}
		}
	}
	return next.UTC()
}

func (c *cronSchedule) String() string { return c.text }

// skippedSlot returns the first spring-forward transition after t and
// before next that skips a wall-clock minute the expression matches, or the
// zero time when there is none. Such a slot runs at the transition, the
// first instant after the skipped minutes.
func (c *cronSchedule) skippedSlot(t, next time.Time) time.Time {
	const step = 12 * time.Hour
	if c.loc == time.UTC {
		return time.Time{}
	}
	for a := t; a.Before(next); a = a.Add(step) {
		b := a.Add(step)
		if b.After(next) {
			b = next
		}
		_, offA := a.Zone()
		_, offB := b.Zone()
		if offB <= offA {
			continue
		}
		// The offset grows within (a, b]: find the transition instant.
		lo, hi := a, b
		for hi.Sub(lo) > time.Second {
			mid := lo.Add(hi.Sub(lo) / 2)
			if _, off := mid.Zone(); off == offA {
				lo = mid
			} else {
				hi = mid
			}
		}
		at := hi.Truncate(time.Second)
		if _, off := at.Zone(); off == offA {
			at = at.Add(time.Second)
		}
		// Wall-clock minutes from the old offset's view of the transition
		// up to the new one's never happen.
		skippedFrom := wallTime(at.In(time.FixedZone("", offA)))
		skippedTo := wallTime(at.In(c.loc))
		if m := c.wall.Next(skippedFrom.Add(-time.Minute)); !m.IsZero() && m.Before(skippedTo) && at.After(t) && at.Before(next) {
			return at
		}
	}
	return time.Time{}
}

// wallTime is t's wall clock as a UTC time, used as a zone-free key.
func wallTime(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), 0, 0, time.UTC)
}

// firstOccurrence returns the earliest instant whose wall clock in loc is
// wall, or the zero time when loc has none.
func firstOccurrence(wall time.Time, loc *time.Location) time.Time {
	// time.Date picks one of two occurrences; an earlier one, if any, is
	// within a few hours before it.
	t := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), 0, 0, loc)
	for _, back := range []time.Duration{3 * time.Hour, 2 * time.Hour, time.Hour, 30 * time.Minute} {
		e := t.Add(-back)
		if wallTime(e).Equal(wall) {
			return e
		}
	}
	return t
}

// parseInterval parses the duration of an "every" schedule.
func parseInterval(spec, d string, anchor time.Time) (Schedule, error) {
	interval, err := time.ParseDuration(d)
	if err != nil {
		return nil, invalid("%q: %q is not a duration; for example \"every 2h\" or \"every 90m\"", spec, d)
	}
	if interval < MinInterval {
		return nil, invalid("%q: the interval must be at least %s; for example \"every 5m\"", spec, MinInterval)
	}
	if interval%time.Minute != 0 {
		return nil, invalid("%q: the interval must be a whole number of minutes; for example \"every 90m\"", spec)
	}
	if anchor.IsZero() {
		return nil, invalid("%q: an interval needs the job's creation time as its anchor", spec)
	}
	return &intervalSchedule{anchor: anchor.UTC().Truncate(time.Minute), every: interval}, nil
}

// intervalSchedule comes due every interval from an anchor.
type intervalSchedule struct {
	anchor time.Time
	every  time.Duration
}

func (s *intervalSchedule) Next(t time.Time) time.Time {
	t = t.UTC()
	if t.Before(s.anchor) {
		return s.anchor
	}
	k := t.Sub(s.anchor)/s.every + 1
	return s.anchor.Add(k * s.every)
}

func (s *intervalSchedule) String() string { return "every " + formatDuration(s.every) }

// formatDuration writes d without zero units ("2h", "1h30m").
func formatDuration(d time.Duration) string {
	out := d.String()
	if strings.HasSuffix(out, "m0s") {
		out = strings.TrimSuffix(out, "0s")
	}
	if strings.HasSuffix(out, "h0m") {
		out = strings.TrimSuffix(out, "0m")
	}
	return out
}

// parseIn parses "in 30m".
func parseIn(spec, d string, now time.Time) (Schedule, error) {
	delay, err := time.ParseDuration(d)
	if err != nil {
		return nil, invalid("%q: %q is not a duration; for example \"in 30m\" or \"in 2h\"", spec, d)
	}
	if delay < time.Minute {
		return nil, invalid("%q: the delay must be at least 1m; for example \"in 30m\"", spec)
	}
	if now.IsZero() {
		return nil, invalid("%q: a relative one-shot needs the current time", spec)
	}
	return &oneShot{at: ceilMinute(now.Add(delay))}, nil
}

// parseAt parses an RFC 3339 timestamp.
func parseAt(spec string, now time.Time) (Schedule, error) {
	at, err := time.Parse(time.RFC3339, spec)
	if err != nil {
		return nil, invalid("%q is not an RFC 3339 timestamp; for example \"2030-01-02T15:04:00+01:00\"", spec)
	}
	if !at.After(now) {
		return nil, invalid("%q is not in the future; for example \"in 30m\" or a later timestamp", spec)
	}
	return &oneShot{at: ceilMinute(at)}, nil
}

// ceilMinute rounds t up to a whole minute, in UTC.
func ceilMinute(t time.Time) time.Time {
	t = t.UTC()
	m := t.Truncate(time.Minute)
	if m.Before(t) {
		m = m.Add(time.Minute)
	}
	return m
}

// oneShot comes due once.
type oneShot struct{ at time.Time }

func (s *oneShot) Next(t time.Time) time.Time {
	if t.Before(s.at) {
		return s.at
	}
	return time.Time{}
}

func (s *oneShot) String() string { return s.at.Format(time.RFC3339) }
