package gateway

import (
	"context"
	"slices"
	"sync"
)

// chatOrder lets the updates of one chat that come by webhook be taken one
// after the other, in the order they entered (their requests read and
// their signatures checked), while those of different chats are taken at
// once. A platform posts each message of a
// chat in its own request and several at once (Twilio, WhatsApp): without
// it, a message posted after one with a slow file (a download, a voice memo
// to transcribe) would be handed over first. The order holds within one
// process; the zero chatOrder is ready.
type chatOrder struct {
	mu sync.Mutex
	// waiting are, for each chat with an update being taken, the turns of
	// the updates come for it, in order; the first is being taken.
	waiting map[string][]chan struct{}
}

// enter waits until every update of chat that entered before is taken, and
// returns the leave that lets the next one in; or ctx's error, having
// left its place.
func (o *chatOrder) enter(ctx context.Context, chat string) (leave func(), err error) {
	turn := make(chan struct{})
	o.mu.Lock()
	if o.waiting == nil {
		o.waiting = map[string][]chan struct{}{}
	}
	q := append(o.waiting[chat], turn)
	o.waiting[chat] = q
	if len(q) == 1 {
		close(turn)
	}
	o.mu.Unlock()
	var once sync.Once
	leave = func() { once.Do(func() { o.leave(chat, turn) }) }
	select {
	case <-turn:
		return leave, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

// leave takes turn out of chat's line; when it was the first, the next
// one's turn comes.
func (o *chatOrder) leave(chat string, turn chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.waiting[chat]
	i := slices.Index(q, turn)
	if i < 0 {
		return
	}
	q = slices.Delete(q, i, i+1)
	if len(q) == 0 {
		delete(o.waiting, chat)
		return
	}
	o.waiting[chat] = q
	if i == 0 {
		close(q[0])
	}
}
