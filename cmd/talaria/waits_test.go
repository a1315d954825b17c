package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/models"
)

// TestPrintWaits: a wait between attempts says when the next starts, a
// running one for how long, each with the last failure.
func TestPrintWaits(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	waits := []engine.ActivityWait{
		{What: "model call", Attempt: 2, MaxAttempts: 6, NextAttempt: at(4 * time.Minute), LastFailure: "model call failed (rate_limit, HTTP 429): slow down"},
		{What: "model call", Attempt: 1, MaxAttempts: 6, RunningFor: time.Minute},
		{What: "tool batch", Attempt: 2, MaxAttempts: 3, RunningFor: 3 * time.Second, LastFailure: `worker \x1b[2Jlost`},
		{What: "model call", Attempt: 2, NextAttempt: at(2 * time.Second)},
	}
	var out bytes.Buffer
	printWaits(&out, waits, now)
	want := "  waiting: model call attempt 2 of 6 in 4m0s — last failure: model call failed (rate_limit, HTTP 429): slow down\n" +
		"  waiting: model call attempt 1 of 6 running for 1m0s\n" +
		"  waiting: tool batch attempt 2 of 3 running for 3s — last failure: worker \\x1b[2Jlost\n" +
		"  waiting: model call attempt 2 in 2s\n"
	if out.String() != want {
		t.Fatalf("printed\n%s\nwant\n%s", out.String(), want)
	}
}

// TestWaitEventIsAProgressLine: a wait event ends the streamed line and is
// shown on stderr, like a status.
func TestWaitEventIsAProgressLine(t *testing.T) {
	var out, errOut bytes.Buffer
	p := &streamPrinter{out: &out, errOut: &errOut}
	p.onEvent(models.Event{Kind: events.KindDelta, Data: "partial answ"})
	p.onEvent(models.Event{Kind: events.KindWait, Data: "model call failed (truncated_reply): cut off; next attempt (2 of 6) in 1s"})
	if out.String() != "partial answ\n" || errOut.String() != "  ⋯ model call failed (truncated_reply): cut off; next attempt (2 of 6) in 1s\n" {
		t.Fatalf("out %q err %q", out.String(), errOut.String())
	}
}
