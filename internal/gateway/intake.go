package gateway

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// How an intake paces itself.
const (
	// maxTakesAtOnce bounds the updates taken at once (each of a
	// different chat): a take is a few store writes and a workflow start,
	// or a file's download and transcription.
	maxTakesAtOnce = 8
	// retakeAfter is how long a chat waits before its update that was not
	// taken (the store or Temporal did not answer) is taken again, times
	// the times it was not, up to maxRetakeAfter.
	retakeAfter    = time.Second
	maxRetakeAfter = 30 * time.Second
	// recheckEvery is how often a platform is asked for new updates while
	// every update it gave is known and some are still being taken (the
	// platform gives the unacknowledged ones again at once).
	recheckEvery = time.Second
)

// intake takes one platform's polled updates: those of a chat one after
// the other, in the order they came, and those of different chats at once,
// so that a slow update (a large file, a voice memo to transcribe, a store
// that does not answer) holds up its own chat only. Every update is
// acknowledged in the order the platform gave it, once it and every update
// before it are taken: Platform.Ack acknowledges every update up to the
// one it is given, and an update acknowledged and not taken would be lost.
type intake struct {
	p   Platform
	ctx context.Context
	// take takes one update (Gateway.take); note records in the
	// platform's lease what was taken last, or why polling failed
	// (Gateway.note).
	take   func(context.Context, Platform, Update) error
	note   func(ctx context.Context, p Platform, updateID, failure string)
	logger *slog.Logger
	// takes bounds the takes at once; changed says that one ended.
	takes   chan struct{}
	changed chan struct{}
	lanes   sync.WaitGroup

	mu sync.Mutex
	// slots are the updates given and not acknowledged, in the order the
	// platform gave them; known, their ids.
	slots []*slot
	known map[string]bool
	// queued is, for each chat with a lane running, the updates waiting
	// for it.
	queued map[string][]*slot
}

// slot is one update given by the platform; taken is set once it is
// durably handed over (or answered). ackFailures and ackAfter, the
// acknowledgments that failed and when the next is tried, belong to the
// poll loop alone.
type slot struct {
	u           Update
	taken       bool
	ackFailures int
	ackAfter    time.Time
}

func newIntake(ctx context.Context, p Platform, take func(context.Context, Platform, Update) error,
	note func(context.Context, Platform, string, string), logger *slog.Logger) *intake {
	return &intake{p: p, ctx: ctx, take: take, note: note, logger: logger,
		takes: make(chan struct{}, maxTakesAtOnce), changed: make(chan struct{}, 1),
		known: map[string]bool{}, queued: map[string][]*slot{}}
}

// poll takes one platform's updates until ctx ends: each is acknowledged
// only once it is durably handed over (or answered, for a stranger), so a
// crash before that gets it again, and handing it over twice is harmless.
// An update whose take keeps panicking is set aside (takeGuarded); a panic
// in the platform's Poll or Ack costs that poll or acknowledgment, not the
// process.
func (g *Gateway) poll(ctx context.Context, p Platform) {
	newIntake(ctx, p, g.takeGuarded, g.note, g.logger).run()
}

// run polls the platform until ctx ends, then waits for the takes under
// way to end.
func (in *intake) run() {
	defer in.lanes.Wait()
	ctx, p := in.ctx, in.p
	failures := 0
	for ctx.Err() == nil {
		in.acknowledge()
		var ups []Update
		err := guard(in.logger, "poll", func() (err error) { ups, err = p.Poll(ctx); return err }, "platform", p.Name())
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			level := slog.LevelDebug
			if failures == 1 || failures%60 == 0 {
				level = slog.LevelWarn
			}
			in.logger.Log(ctx, level, "gateway: poll failed, retrying", "platform", p.Name(), "failures", failures, "error", err)
			in.note(ctx, p, "", err.Error())
			sleep(ctx, min(time.Duration(failures)*time.Second, 30*time.Second))
			continue
		}
		failures = 0
		if in.dispatch(ups) == 0 && in.pending() {
			// Nothing new: the platform gave again what is being taken.
			// Ask again when a take ends, or after a while for updates
			// of other chats.
			select {
			case <-ctx.Done():
			case <-in.changed:
			case <-time.After(recheckEvery):
			}
		}
	}
}

// dispatch queues each update the intake does not know yet on its chat's
// lane, starting the lane when it is not running, and says how many it
// queued.
func (in *intake) dispatch(ups []Update) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	fresh := 0
	for _, u := range ups {
		if in.known[u.ID] {
			continue
		}
		s := &slot{u: u}
		in.known[u.ID] = true
		in.slots = append(in.slots, s)
		fresh++
		chat := u.Chat.ID
		waiting, running := in.queued[chat]
		in.queued[chat] = append(waiting, s)
		if !running {
			in.lanes.Add(1)
			go in.lane(chat)
		}
	}
	return fresh
}

// pending says whether some update given is not acknowledged yet.
func (in *intake) pending() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.slots) > 0
}

// lane takes one chat's queued updates in order until none is left or
// ctx ends. An update that is not taken is taken again after retakeAfter,
// and the chat's later updates wait for it.
func (in *intake) lane(chat string) {
	defer in.lanes.Done()
	failures := 0
	for {
		in.mu.Lock()
		waiting := in.queued[chat]
		if len(waiting) == 0 || in.ctx.Err() != nil {
			delete(in.queued, chat)
			in.mu.Unlock()
			return
		}
		s := waiting[0]
		in.mu.Unlock()
		if !in.takeOne(s.u) {
			failures++
			sleep(in.ctx, min(time.Duration(failures)*retakeAfter, maxRetakeAfter))
			continue
		}
		failures = 0
		in.mu.Lock()
		s.taken = true
		in.queued[chat] = in.queued[chat][1:]
		in.mu.Unlock()
		select {
		case in.changed <- struct{}{}:
		default:
		}
	}
}

// takeOne takes one update, at most maxTakesAtOnce at once, and says
// whether it was taken.
func (in *intake) takeOne(u Update) bool {
	select {
	case in.takes <- struct{}{}:
	case <-in.ctx.Done():
		return false
	}
	err := in.take(in.ctx, in.p, u)
	<-in.takes
	if err != nil && in.ctx.Err() == nil {
		in.logger.Warn("gateway: update not taken, taking it again", "platform", in.p.Name(), "update", u.ID, "error", err)
	}
	return err == nil
}

// acknowledge acknowledges the updates taken: in the order given, up to
// the first that is not taken (or each, on a platform that acknowledges
// them one by one).
func (in *intake) acknowledge() {
	_, each := in.p.(AcksOneByOne)
	in.mu.Lock()
	done := ackable(in.slots, each)
	in.mu.Unlock()
	// An update whose acknowledgment failed stays, taken: it is
	// acknowledged again after a pause, not taken again.
	acked := make(map[*slot]bool, len(done))
	for _, s := range done {
		if time.Now().Before(s.ackAfter) {
			if !each {
				break
			}
			continue
		}
		if err := guard(in.logger, "acknowledge", func() error { return in.p.Ack(in.ctx, s.u) }, "platform", in.p.Name(), "update", s.u.ID); err != nil {
			s.ackFailures++
			s.ackAfter = time.Now().Add(min(time.Duration(s.ackFailures)*retakeAfter, maxRetakeAfter))
			if s.ackFailures == 1 || s.ackFailures%30 == 0 {
				in.logger.Warn("gateway: acknowledge, trying again", "platform", in.p.Name(), "update", s.u.ID, "failures", s.ackFailures, "error", err)
			}
			if !each {
				break // acknowledged in order: the later ones wait for it
			}
			continue
		}
		acked[s] = true
		in.note(in.ctx, in.p, s.u.ID, "")
	}
	if len(acked) == 0 {
		return
	}
	in.mu.Lock()
	for s := range acked {
		delete(in.known, s.u.ID)
	}
	in.slots = slices.DeleteFunc(in.slots, func(s *slot) bool { return acked[s] })
	in.mu.Unlock()
}

// ackable is the slots (given in that order) to acknowledge: the first
// ones that are taken, up to the first that is not, or with each every one
// taken. Pure.
func ackable(slots []*slot, each bool) []*slot {
	var ack []*slot
	for _, s := range slots {
		switch {
		case s.taken:
			ack = append(ack, s)
		case !each:
			return ack
		}
	}
	return ack
}
