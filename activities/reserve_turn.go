package activities

import (
	"context"
	"fmt"
)

// ReserveTurn numbers a session's next turn (creating the session when new).
func (a *Activities) ReserveTurn(ctx context.Context, sessionID, model string) (int, error) {
	n, err := a.Store.NextTurn(ctx, sessionID, model)
	if err != nil {
		return 0, fmt.Errorf("reserve a turn of %s: %w", sessionID, err)
	}
	return n, nil
}
