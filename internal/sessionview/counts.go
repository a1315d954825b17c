package sessionview

import (
	"context"
	"fmt"

	"github.com/talaria-agent/talaria/models"
)

// TurnCount is how many turns a session has, from its row and the turns
// stored for it: the highest of the turns it reserved (its row's count),
// the turns stored and the highest turn number stored. The row counts only
// reserved turns in sessions written before every turn was counted there
// (a goal's, a cron job's, a sub-agent's turns were not), and a compacted
// session's turns go on numbering its lineage's, so neither alone is the
// count. Pure.
func TurnCount(s models.Session, turns []models.Turn) int {
	n := max(s.TurnCount, len(turns))
	for _, t := range turns {
		n = max(n, t.Number)
	}
	return n
}

// WithTurnCounts returns sessions with TurnCount set to TurnCount of each
// and the turns st stores for it, so every view of a session counts the
// turns it shows.
func WithTurnCounts(ctx context.Context, st *models.Store, sessions []models.Session) ([]models.Session, error) {
	out := make([]models.Session, len(sessions))
	for i, s := range sessions {
		turns, err := st.Turns(ctx, s.ID)
		if err != nil {
			return nil, fmt.Errorf("count the turns of session %s: %w", s.ID, err)
		}
		s.TurnCount = TurnCount(s, turns)
		out[i] = s
	}
	return out, nil
}
