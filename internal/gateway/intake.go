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
	g   *Gateway
	p   Platform
	ctx context.Context
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
// durably handed over (or answered).
type slot struct {
	u     Update
	taken bool
}

func newIntake(ctx context.Context, g *Gateway, p Platform) *intake {
	return &intake{g: g, p: p, ctx: ctx, takes: make(chan struct{}, maxTakesAtOnce), changed: make(chan struct{}, 1),
		known: map[string]bool{}, queued: map[string][]*slot{}}
}

// poll takes one platform's updates until ctx ends: each is acknowledged
// only once it is durably handed over (or answered, for a stranger), so a
// crash before that gets it again, and handing it over twice is harmless.
func (g *Gateway) poll(ctx context.Context, p Platform) {
	in := newIntake(ctx, g, p)
	defer in.lanes.Wait()
	failures := 0
	for ctx.Err() == nil {
		in.acknowledge()
		ups, err := p.Poll(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			level := slog.LevelDebug
			if failures == 1 || failures%60 == 0 {
				level = slog.LevelWarn
			}
			g.logger.Log(ctx, level, "gateway: poll failed, retrying", "platform", p.Name(), "failures", failures, "error", err)
			g.note(ctx, p, "", err.Error())
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
		if !in.take(s.u) {
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

// take takes one update, at most maxTakesAtOnce at once, and says whether
// it was taken.
func (in *intake) take(u Update) bool {
	select {
	case in.takes <- struct{}{}:
	case <-in.ctx.Done():
		return false
	}
	err := in.g.take(in.ctx, in.p, u)
	<-in.takes
	if err != nil && in.ctx.Err() == nil {
		in.g.logger.Warn("gateway: update not taken, taking it again", "platform", in.p.Name(), "update", u.ID, "error", err)
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
	for _, s := range done {
		if err := in.p.Ack(in.ctx, s.u); err != nil {
			in.g.logger.Warn("gateway: acknowledge", "platform", in.p.Name(), "update", s.u.ID, "error", err)
		}
		in.g.note(in.ctx, in.p, s.u.ID, "")
	}
	if len(done) == 0 {
		return
	}
	acked := make(map[*slot]bool, len(done))
	in.mu.Lock()
	for _, s := range done {
		acked[s] = true
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
