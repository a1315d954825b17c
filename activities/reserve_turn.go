package activities

import (
	"context"
	"fmt"
)

// ReserveTurn numbers a session's next turn (creating the session when new).
// key identifies the reservation (from the message's request id): a retry
// with the same key gets the same number. Older coordinators pass no key
// (the SDK leaves the missing argument empty).
func (a *Activities) ReserveTurn(ctx context.Context, sessionID, model, key string) (int, error) {
	n, err := a.Store.NextTurn(ctx, sessionID, model, key)
	if err != nil {
		return 0, fmt.Errorf("reserve a turn of %s: %w", sessionID, err)
	}
	return n, nil
}
