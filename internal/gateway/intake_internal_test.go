package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestAckable: the updates acknowledged are the first ones, up to the
// first not taken, or on a platform that acknowledges them one by one,
// every one taken.
func TestAckable(t *testing.T) {
	t.Parallel()
	taken := func(flags ...bool) []*slot {
		out := make([]*slot, 0, len(flags))
		for _, f := range flags {
			out = append(out, &slot{taken: f})
		}
		return out
	}
	for _, c := range []struct {
		name  string
		slots []*slot
		each  bool
		want  []int
	}{
		{"none", nil, false, nil},
		{"all taken", taken(true, true, true), false, []int{0, 1, 2}},
		{"the first not taken", taken(false, true, true), false, nil},
		{"a gap", taken(true, false, true), false, []int{0}},
		{"the last not taken", taken(true, true, false), false, []int{0, 1}},
		{"one by one: the first not taken", taken(false, true, true), true, []int{1, 2}},
		{"one by one: a gap", taken(true, false, true), true, []int{0, 2}},
		{"one by one: none taken", taken(false, false), true, nil},
	} {
		got := ackable(c.slots, c.each)
		var idx []int
		for _, s := range got {
			idx = append(idx, slices.Index(c.slots, s))
		}
		if !slices.Equal(idx, c.want) {
			t.Errorf("%s: ackable = %v, want %v", c.name, idx, c.want)
		}
	}
}

// fakePlatform is an in-memory platform for the intake: Poll gives the
// updates not acknowledged yet, in order (at once when there are some,
// else when one comes or ctx ends); Ack acknowledges every update up to
// the one given (as Telegram's offset does), or that one alone (oneByOne).
type fakePlatform struct {
	oneByOne bool
	mu       sync.Mutex
	pending  []Update
	order    map[string]int // an update's place in the order given
	wake     chan struct{}
	polls    int
	acked    []string
	// sent are the parts sent, each as "chat: part".
	sent []string
	// beforeAck checks each acknowledgment; ackErr fails the next ones.
	beforeAck func(u Update)
	ackErr    map[string]int
}

func newFakePlatform(oneByOne bool) *fakePlatform {
	return &fakePlatform{oneByOne: oneByOne, order: map[string]int{}, wake: make(chan struct{}), ackErr: map[string]int{}}
}

func (f *fakePlatform) push(ups ...Update) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, u := range ups {
		if _, ok := f.order[u.ID]; !ok {
			f.order[u.ID] = len(f.order)
		}
		f.pending = append(f.pending, u)
	}
	close(f.wake)
	f.wake = make(chan struct{})
}

func (f *fakePlatform) Poll(ctx context.Context) ([]Update, error) {
	for {
		f.mu.Lock()
		f.polls++
		out, wake := append([]Update(nil), f.pending...), f.wake
		f.mu.Unlock()
		if len(out) > 0 {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wake:
		}
	}
}

func (f *fakePlatform) Ack(_ context.Context, u Update) error {
	if f.beforeAck != nil {
		f.beforeAck(u)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ackErr[u.ID] > 0 {
		f.ackErr[u.ID]--
		return errors.New("the platform did not answer")
	}
	f.acked = append(f.acked, u.ID)
	f.pending = slices.DeleteFunc(f.pending, func(p Update) bool {
		return p.ID == u.ID || !f.oneByOne && f.order[p.ID] < f.order[u.ID]
	})
	return nil
}

func (f *fakePlatform) Name() string               { return "fake" }
func (f *fakePlatform) Account() string            { return "1" }
func (f *fakePlatform) BotName() string            { return "bot" }
func (f *fakePlatform) Parts(text string) []string { return []string{text} }
func (f *fakePlatform) SendPart(_ context.Context, m Outgoing, part string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, m.ChatID+": "+part)
	return "1", nil
}

func (f *fakePlatform) Edit(context.Context, string, string, string, [][]Button) error { return nil }
func (f *fakePlatform) Typing(context.Context, string) error                           { return nil }
func (f *fakePlatform) AnswerButton(context.Context, Update, string, bool) error       { return nil }

// oneByOnePlatform is a fakePlatform that says its acknowledgments are
// one by one.
type oneByOnePlatform struct{ *fakePlatform }

func (oneByOnePlatform) AcksOneByOne() {}

// taker records the takes of an intake: each update's attempts and the
// order the updates were taken in; fail says how many first attempts of
// an update fail, hold blocks an update's takes until it is closed.
type taker struct {
	mu       sync.Mutex
	attempts map[string]int
	taken    []string
	fail     map[string]int
	hold     map[string]chan struct{}
	ended    map[string]bool // an update's last take has returned
}

func newTaker() *taker {
	return &taker{attempts: map[string]int{}, fail: map[string]int{}, hold: map[string]chan struct{}{}, ended: map[string]bool{}}
}

func (k *taker) take(ctx context.Context, _ Platform, u Update) error {
	defer func() {
		k.mu.Lock()
		k.ended[u.ID] = true
		k.mu.Unlock()
	}()
	k.mu.Lock()
	k.attempts[u.ID]++
	k.ended[u.ID] = false
	failing := k.attempts[u.ID] <= k.fail[u.ID]
	hold := k.hold[u.ID]
	k.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if failing {
		return errors.New("the store did not answer")
	}
	k.mu.Lock()
	k.taken = append(k.taken, u.ID)
	k.mu.Unlock()
	return nil
}

func (k *taker) state() (taken []string, attempts map[string]int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.taken...), maps.Clone(k.attempts)
}

func upd(id, chat string) Update { return Update{ID: id, Chat: Chat{ID: chat}, Text: id} }

// runIntake runs an intake on p with k until the test ends; it returns a
// channel closed once the intake returned, and the cancel that ends it.
func runIntake(t *testing.T, p Platform, k *taker) (<-chan struct{}, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	in := newIntake(ctx, p, k.take, func(context.Context, Platform, string, string) {}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	go func() { defer close(done); in.run() }()
	t.Cleanup(func() { cancel(); <-done })
	return done, cancel
}

// waitFor waits until ok holds, for at most a minute.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("never: %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestIntakeRetakesInOrder: an update that is not taken is taken again,
// its chat's later update waits behind it, other chats go on meanwhile,
// and no acknowledgment passes it (Ack acknowledges everything up to the
// update it is given); a batch that gives one update twice takes it once;
// and the platform is not asked again and again while nothing changes.
func TestIntakeRetakesInOrder(t *testing.T) {
	t.Parallel()
	p := newFakePlatform(false)
	k := newTaker()
	k.fail["a1"] = 2
	p.beforeAck = func(u Update) {
		taken, _ := k.state()
		p.mu.Lock()
		defer p.mu.Unlock()
		for id, at := range p.order {
			if at <= p.order[u.ID] && !slices.Contains(taken, id) {
				t.Errorf("acknowledging %s would acknowledge %s, not taken", u.ID, id)
			}
		}
	}
	runIntake(t, p, k)
	p.push(upd("a1", "A"), upd("b1", "B"), upd("a2", "A"), upd("c1", "C"), upd("c1", "C"))

	waitFor(t, "b1 and c1 taken while a1 fails", func() bool {
		taken, _ := k.state()
		return slices.Contains(taken, "b1") && slices.Contains(taken, "c1")
	})
	if taken, attempts := k.state(); slices.Contains(taken, "a1") || slices.Contains(taken, "a2") || attempts["a2"] != 0 {
		t.Fatalf("taken %v, attempts %v: a2 must wait for a1", taken, attempts)
	}
	waitFor(t, "every update acknowledged", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.pending) == 0
	})
	taken, attempts := k.state()
	if slices.Index(taken, "a1") > slices.Index(taken, "a2") || attempts["a1"] != 3 || attempts["c1"] != 1 || len(taken) != 4 {
		t.Fatalf("taken %v, attempts %v: want a1 (third attempt) before a2, c1 once", taken, attempts)
	}
	p.mu.Lock()
	polls := p.polls
	p.mu.Unlock()
	if polls > 40 { // about a poll a second of the ~3 s a1 took, and one per take
		t.Errorf("the platform was asked %d times", polls)
	}
}

// TestIntakeAcksOneByOne: on a platform that acknowledges each update
// alone, one taken is acknowledged while an earlier one is still being
// taken; an acknowledgment that fails is tried again, and its update is
// not taken again.
func TestIntakeAcksOneByOne(t *testing.T) {
	t.Parallel()
	p := newFakePlatform(true)
	k := newTaker()
	slow := make(chan struct{})
	k.hold["a1"] = slow
	p.ackErr["b1"] = 1
	runIntake(t, oneByOnePlatform{p}, k)
	p.push(upd("a1", "A"), upd("b1", "B"))
	waitFor(t, "b1 acknowledged while a1 is taken", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return slices.Contains(p.acked, "b1")
	})
	close(slow)
	waitFor(t, "a1 acknowledged", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return slices.Contains(p.acked, "a1")
	})
	if _, attempts := k.state(); attempts["b1"] != 1 {
		t.Fatalf("b1 taken %d times, want once (only its acknowledgment failed)", attempts["b1"])
	}
}

// TestIntakeEndsWithItsTakes: when the intake's context ends (its lease
// lost), it returns once the takes under way have ended, and what they
// did not take is not acknowledged.
func TestIntakeEndsWithItsTakes(t *testing.T) {
	t.Parallel()
	p := newFakePlatform(false)
	k := newTaker()
	k.hold["a1"] = make(chan struct{}) // never released: only the context ends it
	done, cancel := runIntake(t, p, k)
	p.push(upd("a1", "A"), upd("b1", "B"))
	waitFor(t, "b1 taken", func() bool { taken, _ := k.state(); return slices.Contains(taken, "b1") })
	cancel()
	waitFor(t, "the intake returned when its context ended", func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
	k.mu.Lock()
	ended := k.ended["a1"]
	k.mu.Unlock()
	if !ended {
		t.Fatal("the intake returned while a1's take was still under way")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.acked) != 0 {
		t.Fatalf("acknowledged %v though a1, given first, was not taken", p.acked)
	}
}
