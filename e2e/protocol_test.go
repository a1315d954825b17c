package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// TestCutOffStreamEndsTruncated: a stream that ends, or breaks, before its
// finish reason is not an answer: it is asked again, and when every
// attempt is cut off the turn ends truncated with a message, exit 1. The
// text shown before each cut is followed by a notice of the next attempt.
func TestCutOffStreamEndsTruncated(t *testing.T) {
	t.Parallel()
	cut := []fakellm.Step{
		{Text: "partial answer that goes on and on", EndAfterChunks: 2},
		{Text: "partial answer that goes on and on", BreakAfterChunks: 3},
		{Text: "partial answer that goes on and on", EndAfterChunks: 2},
	}
	model := fakellm.New(fakellm.WithSteps(cut...), fakellm.WithSteps(cut...))
	defer model.Close()
	u := newUser(t, model.URL())
	writeConfig("model:\n  attempts: 3\n")(t, u)

	res, stderr, code := u.chatJSON(2*time.Minute, "-q", "tell me everything", "--session", "cut")
	if code != 1 || res.TurnExitReason != workflows.StopTruncated || res.Completed || res.FinalResponse != nil {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	if res.Error == nil || !strings.Contains(*res.Error, "reply was cut off") || !strings.Contains(*res.Error, "without a finish reason") {
		t.Fatalf("error %v, want the reply named as cut off", res.Error)
	}
	if n := len(model.Requests()); n != 3 {
		t.Fatalf("%d model requests, want 3 (model.attempts)", n)
	}
	if got := roles(res.Messages); got != "user" {
		t.Fatalf("messages %s: a cut-off reply is not stored as an answer", got)
	}

	// The same as a person sees it: the partial text, then the notice of
	// each next attempt, then why the turn ended.
	stdout, stderr, code := u.run(2*time.Minute, "chat", "-q", "tell me everything", "--session", "cut2")
	if code != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for _, want := range []string{"next attempt (2 of 3)", "next attempt (3 of 3)", "turn ended: truncated", "cut off"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "partial") {
		t.Errorf("stdout %q: the streamed text was not shown", stdout)
	}
}

// TestHTMLBodyIsInvalidResponse: an HTML page with status 200 is not the
// protocol: the turn fails after exactly 3 requests (retried twice) with
// invalid_response, showing the page's first bytes.
func TestHTMLBodyIsInvalidResponse(t *testing.T) {
	t.Parallel()
	page := fakellm.HTMLStep("Gateway error from the proxy")
	model := fakellm.New(page, page, page, page, page, page)
	defer model.Close()
	u := newUser(t, model.URL())
	res, stderr, code := u.chatJSON(2*time.Minute, "-q", "hello", "--session", "html")
	if code != 1 || res.TurnExitReason != workflows.StopError || res.Completed {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	// Retried twice, then failed: three requests in all, the other three
	// pages never asked for.
	if n, left := len(model.Requests()), model.Remaining(); n != 3 || left != 3 {
		t.Fatalf("%d model requests (%d scripted answers left), want exactly 3", n, left)
	}
	if res.Error == nil || !strings.Contains(*res.Error, "invalid_response") ||
		!strings.Contains(*res.Error, "<!DOCTYPE html> <html><head><title>Gateway error from the proxy") {
		t.Fatalf("error %v, want invalid_response with the page's first bytes", res.Error)
	}
	t.Logf("error: %s", *res.Error)
	if len(*res.Error) > 1500 {
		t.Fatalf("error of %d bytes is not clipped", len(*res.Error))
	}
}

// TestRetryAfterIsCapped: a provider asking to wait a day is waited on for
// model.max_retry_after at most; chat shows the wait as a progress line and
// status shows the next attempt and why the last one failed.
func TestRetryAfterIsCapped(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.Step{Status: 429, ErrorMessage: "come back tomorrow", RetryAfter: "86400"},
		fakellm.TextStep("done after the wait"),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	writeConfig("model:\n  max_retry_after: 8s\n")(t, u)
	srv := u.serve(0)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := u.command(ctx, "chat", "-q", "hello", "--session", "waiting")
	var out bytes.Buffer
	errOut := &lockedWriter{w: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = &out, errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stderr := func() string {
		errOut.mu.Lock()
		defer errOut.mu.Unlock()
		return errOut.w.(*bytes.Buffer).String()
	}
	waitFor(t, time.Minute, func() bool { return strings.Contains(stderr(), "next attempt (2 of 6) in 8s") })
	if !strings.Contains(stderr(), "come back tomorrow") || !strings.Contains(stderr(), "capped at 8s") {
		t.Fatalf("progress line does not say why it waits:\n%s", stderr())
	}

	status, serr, code := u.run(time.Minute, "status", "waiting")
	t.Logf("chat stderr:\n%s\nstatus:\n%s", stderr(), status)
	if code != 0 || !strings.Contains(status, "waiting: model call attempt 2 of 6 in") ||
		!strings.Contains(status, "last failure: model call failed (rate_limit, HTTP 429): come back tomorrow") {
		t.Fatalf("status (exit %d):\n%s%s", code, status, serr)
	}

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chat: %v\n%s", err, stderr())
		}
	case <-ctx.Done():
		t.Fatalf("chat did not finish after the capped wait:\n%s", stderr())
	}
	if !strings.Contains(out.String(), "done after the wait") {
		t.Fatalf("stdout %q", out.String())
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	// That the wait was capped (not "tomorrow") shows in the progress line
	// and in chat ending before its give-up above.
	// wallclock: a lower bound: the retry's delay runs from the failure, after the first request arrived; load only lengthens the gap
	if gap := reqs[1].Received.Sub(reqs[0].Received); gap < 7*time.Second {
		t.Fatalf("second attempt %v after the first, want the 8s cap waited", gap)
	}
	// The wait is shown once, as progress; the SDK's per-attempt error
	// line would repeat it.
	if strings.Contains(srv.stderr.String(), "Activity error") || strings.Contains(stderr(), "Activity error") {
		t.Errorf("a failed attempt was logged as an error:\nserve:\n%s\nchat:\n%s", srv.stderr.String(), stderr())
	}
}

// TestModelIdleTimeout: model.timeout bounds the time without progress: a
// model that never answers is given up after it and asked again; a stream
// slower in total than the timeout lives while its chunks keep coming.
func TestModelIdleTimeout(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.Step{Hang: true},
		fakellm.Step{Text: "one two three four five six", ChunkDelay: 800 * time.Millisecond},
	)
	defer model.Close()
	u := newUser(t, model.URL())
	writeConfig("model:\n  timeout: 3s\n  attempts: 2\n")(t, u)
	res, stderr, code := u.chatJSON(2*time.Minute, "-q", "hello", "--session", "idle")
	if code != 0 || !res.Completed || res.FinalResponse == nil || *res.FinalResponse != "one two three four five six" {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	if strings.Contains(stderr, "Activity error") {
		t.Errorf("the given-up attempt was logged as an error:\n%s", stderr)
	}
	reqs := model.Requests()
	if len(reqs) != 2 || !reqs[0].Cancelled {
		t.Fatalf("%d requests, first cancelled: %v", len(reqs), len(reqs) > 0 && reqs[0].Cancelled)
	}
	// A silent call the timeout did not give up would hang past chatJSON's
	// two minutes: only the lower bound is checked.
	// wallclock: a lower bound: the client's 3 s run from its send, before the fake's receipt; the 500 ms cover that
	if d := reqs[0].Finished.Sub(reqs[0].Received); d < 2500*time.Millisecond {
		t.Fatalf("the silent call was given up after %v, want the 3s timeout waited", d)
	}
	// wallclock: a lower bound, the test's premise: the fake sleeps between chunks; load only lengthens the stream
	if d := reqs[1].Finished.Sub(reqs[1].Received); d < 4*time.Second {
		t.Fatalf("the slow stream took %v: not slower than the timeout, the test proves nothing", d)
	}
}

// TestSlowModelIsShown: a model that has sent nothing for a while is a
// wait chat shows as a progress line and status as a running attempt.
func TestSlowModelIsShown(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.Step{Text: "finally here", Delay: 14 * time.Second})
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := u.command(ctx, "chat", "-q", "hello", "--session", "slow")
	var out bytes.Buffer
	errOut := &lockedWriter{w: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = &out, errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stderr := func() string {
		errOut.mu.Lock()
		defer errOut.mu.Unlock()
		return errOut.w.(*bytes.Buffer).String()
	}
	waitFor(t, time.Minute, func() bool { return strings.Contains(stderr(), "the model has sent nothing for 10s") })
	status, serr, code := u.run(time.Minute, "status", "slow")
	t.Logf("chat stderr:\n%s\nstatus:\n%s", stderr(), status)
	if code != 0 || !strings.Contains(status, "waiting: model call attempt 1 of 6 running for") {
		t.Fatalf("status (exit %d):\n%s%s", code, status, serr)
	}
	select {
	case err := <-done:
		if err != nil || !strings.Contains(out.String(), "finally here") {
			t.Fatalf("chat: %v\n%s\n%s", err, out.String(), stderr())
		}
	case <-ctx.Done():
		t.Fatalf("chat did not finish:\n%s", stderr())
	}
}
