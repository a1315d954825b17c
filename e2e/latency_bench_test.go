package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/fakellm"
)

// BenchmarkStop measures, on one serve, the time from `talaria stop` to the
// end of the stopped `talaria chat` (the turn interrupted, the result
// printed), in a new session each time: during a model call that streamed
// its first words and then stalls (TestStopDuringModelCall), while two
// delegated tasks wait for their model (TestDelegateStop), and during a
// quick batch whose memory call waits for a lock another process holds
// (TestStopDuringAStuckQuickBatch: the call's deadline is 10 s). It reports
// the mean as s/stop:
//
//	go test ./e2e/ -run '^$' -bench BenchmarkStop -benchtime 3x
func BenchmarkStop(b *testing.B) {
	b.Run("model call", func(b *testing.B) {
		model := fakellm.New(fakellm.WithResponder(func(fakellm.Request) fakellm.Step {
			return fakellm.Step{Text: "partial words that never finish", StallAfterChunks: 2}
		}))
		b.Cleanup(model.Close)
		u := newUser(b, model.URL())
		u.serve(0)
		benchStops(b, u, func(session string) func() {
			return func() { u.waitEvent("turn/"+session+"/1", events.KindDelta) }
		})
	})
	b.Run("delegated tasks", func(b *testing.B) {
		model := delegatingModel([]map[string]any{{"goal": "GOAL-ALPHA"}, {"goal": "GOAL-BETA"}}, 10*time.Minute)
		b.Cleanup(model.Close)
		u := newUser(b, model.URL())
		u.serve(0)
		benchStops(b, u, func(string) func() {
			before := len(model.Requests())
			return func() { // the parent's request and both tasks'
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := model.WaitRequests(ctx, before+3); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("stuck quick batch", func(b *testing.B) {
		model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
			if last, _ := req.LastMessage(); last.Role == "user" {
				return fakellm.ToolStep(
					fakellm.ToolCall{ID: "m1", Name: "memory", Arguments: `{"action":"add","target":"memory","content":"the user likes tea"}`},
					fakellm.ToolCall{ID: "r1", Name: "read_file", Arguments: `{"path":"."}`})
			}
			return fakellm.TextStep("Noted.")
		}))
		b.Cleanup(model.Close)
		u := newUser(b, model.URL())
		if err := os.MkdirAll(filepath.Join(u.home, "memories"), 0o700); err != nil {
			b.Fatal(err)
		}
		lock, err := os.OpenFile(filepath.Join(u.home, "memories", "MEMORY.md.lock"), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = lock.Close() })
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
			b.Fatal(err)
		}
		u.serve(0)
		benchStops(b, u, func(session string) func() {
			return func() { u.waitEvent("turn/"+session+"/1", events.KindToolStart) }
		})
	})
}

// benchStops starts a chat in a new session, waits with the function
// prepare returned (called before the chat starts) until the turn is where
// it is to be stopped, stops it and times the stop, b.N times; it reports
// the mean as s/stop.
func benchStops(b *testing.B, u *user, prepare func(session string) func()) {
	var total time.Duration
	n := 0
	for b.Loop() {
		session := fmt.Sprintf("stop%d", n)
		ready := prepare(session)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		wait := u.background(ctx, "chat", "--json", "-q", "go on", "--session", session)
		ready()
		stopped := time.Now()
		if out, stderr, code := u.run(time.Minute, "stop", session); code != 0 {
			b.Fatalf("stop: exit %d\n%s%s", code, out, stderr)
		}
		if _, stderr, code := wait(); code != 1 {
			b.Fatalf("the stopped chat: exit %d, want 1 (interrupted)\n%s", code, stderr)
		}
		total += time.Since(stopped)
		n++
		cancel()
	}
	b.ReportMetric(total.Seconds()/float64(n), "s/stop")
}

// BenchmarkRetryProgress measures the time from a failed model call (when
// the fake finished answering HTTP 500) to the progress line chat shows for
// it (TestRetryProgress), on one serve, a new session each time; it reports
// the mean as ms/notice:
//
//	go test ./e2e/ -run '^$' -bench BenchmarkRetryProgress -benchtime 5x
func BenchmarkRetryProgress(b *testing.B) {
	model := fakellm.New()
	b.Cleanup(model.Close)
	u := newUser(b, model.URL())
	u.serve(0)
	var total time.Duration
	n := 0
	for b.Loop() {
		failed := len(model.Requests())
		model.Push(fakellm.Step{Status: 500, ErrorMessage: "upstream exploded"}, fakellm.TextStep("recovered"))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := u.command(ctx, "chat", "-q", "hello", "--session", fmt.Sprintf("flaky%d", n))
		errOut := &stampedLines{}
		cmd.Stderr = errOut
		if err := cmd.Run(); err != nil {
			b.Fatalf("chat: %v\n%s", err, errOut)
		}
		cancel()
		line, ok := errOut.first("next attempt (2 of 6)")
		if !ok {
			b.Fatalf("no progress line:\n%s", errOut)
		}
		total += line.at.Sub(model.Requests()[failed].Finished)
		n++
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(n), "ms/notice")
}
