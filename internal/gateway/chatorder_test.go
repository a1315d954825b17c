package gateway

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// TestChatOrder: the updates of one chat enter one after the other, in the
// order they came; another chat's do not wait for them; one that gives up
// waiting leaves its place without holding up those behind it.
func TestChatOrder(t *testing.T) {
	t.Parallel()
	var o chatOrder
	ctx := t.Context()
	first, err := o.enter(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	// Another chat goes in at once.
	other, err := o.enter(ctx, "B")
	if err != nil {
		t.Fatal(err)
	}
	other()

	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	queued := func(n int) { // waits until n updates of A wait behind first
		waitFor(t, "queued", func() bool {
			o.mu.Lock()
			defer o.mu.Unlock()
			return len(o.waiting["A"]) == n+1
		})
	}
	enter := func(ctx context.Context, i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			leave, err := o.enter(ctx, "A")
			if err != nil {
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			leave()
		}()
	}
	enter(ctx, 1)
	queued(1)
	gaveUp, giveUp := context.WithCancel(ctx)
	enter(gaveUp, 2)
	queued(2)
	enter(ctx, 3)
	queued(3)
	giveUp()
	queued(2)
	mu.Lock()
	if len(order) != 0 {
		t.Fatalf("%v entered while the first was in", order)
	}
	mu.Unlock()
	first()
	first() // leaving twice changes nothing
	wg.Wait()
	if !slices.Equal(order, []int{1, 3}) {
		t.Fatalf("entered in the order %v, want [1 3]", order)
	}
	if len(o.waiting) != 0 {
		t.Fatalf("lines left: %v", o.waiting)
	}
}
