package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/fakewire"
	"github.com/talaria-agent/talaria/workflows"
)

// TestSessionRefusesWhatItCannotHold: while a turn runs, a long message
// queues; a second one that would make the waiting messages weigh more
// than the coordinator carries is refused at once (ErrQueueFull), as is a
// message that weighs too much as sent (ErrMessageTooLarge: text of
// angle brackets, each six bytes of JSON), and
// nothing of either is recorded. The session stays whole: its state is
// still answered, the queued message runs, and once the queue has room
// the refused message is taken.
func TestSessionRefusesWhatItCannotHold(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		if last, _ := req.LastMessage(); last.Content == "first" {
			<-release
		}
		return fakellm.TextStep("ok")
	}))
	defer model.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	rt := startRuntime(t, model)
	_, plain := countCalls(t, rt)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const session = "bounds"
	run := func(text string) <-chan error {
		out := make(chan error, 1)
		go func() {
			in := workflows.TurnInput{SessionID: session, UserMessage: text, Model: fakellm.DefaultModel, Workdir: t.TempDir()}
			_, err := rt.RunMessage(ctx, in, workflows.BusyQueue, nil)
			out <- err
		}()
		return out
	}
	first := run("first")
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", 350<<10)
	queued := run(long)
	state := func() workflows.SessionState { return sessionState(ctx, t, plain, session) }
	if _, err := fakewire.Wait(ctx, state, func(st workflows.SessionState) bool { return len(st.Queued) > 0 }); err != nil {
		t.Fatal("the long message never showed in the queue")
	}
	var refused *RefusedError
	if err := <-run(strings.Repeat("b", 350<<10)); !errors.Is(err, ErrQueueFull) || !errors.As(err, &refused) || !strings.Contains(refused.Why, "(1 waiting)") {
		t.Fatalf("a second long message: %v, want ErrQueueFull", err)
	}
	if err := <-run(strings.Repeat("<", workflows.MaxMessageBytes/2)); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("a message over the limit: %v, want ErrMessageTooLarge", err)
	}
	if q := queuedTexts(ctx, t, plain, session); len(q) != 1 || q[0] != long {
		t.Fatalf("the session's queue holds %d messages, want the long one alone", len(q))
	}
	close(release)
	for name, ch := range map[string]<-chan error{"first": first, "queued": queued} {
		if err := <-ch; err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// The coordinator learns of the turn's end just after its sender: the
	// turn's message counts until then.
	idle := func(st workflows.SessionState) bool {
		return st.SessionID != "" && st.Running == "" && len(st.Queued) == 0
	}
	if _, err := fakewire.Wait(ctx, state, idle); err != nil {
		t.Fatal("the session never went idle")
	}
	if err := <-run(strings.Repeat("b", 350<<10)); err != nil {
		t.Fatalf("the refused message once the queue had room: %v", err)
	}
}
