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

// List is a page of sessions, most recently updated first: limit of them
// after the first offset, their turns counted and their first messages
// read (limit 0: all of them); more says whether another page follows.
// The sessions the engine makes to review memory are left out unless all.
// Every client's list (talaria sessions list, GET /api/sessions) is this.
func List(ctx context.Context, st *models.Store, offset, limit int, all bool) (sessions []Session, more bool, err error) {
	ask := limit + 1
	if limit <= 0 {
		ask = 0
	}
	page, err := st.SessionPage(ctx, offset, ask, all)
	if err != nil {
		return nil, false, err
	}
	if more = limit > 0 && len(page) > limit; more {
		page = page[:limit]
	}
	if page, err = WithTurnCounts(ctx, st, page); err != nil {
		return nil, false, err
	}
	return NewSessions(page, FirstMessage(ctx, st)), more, nil
}

// Show is session id whole: its turns, conversation, lineage and the
// tasks it delegated, each session with its turns counted; an error
// wrapping models.ErrNotFound for a session the store does not hold.
func Show(ctx context.Context, st *models.Store, id string) (Detail, error) {
	sess, err := st.Session(ctx, id)
	if err != nil {
		return Detail{}, err
	}
	msgs, err := st.Messages(ctx, sess.ID)
	if err != nil {
		return Detail{}, err
	}
	turns, err := st.Turns(ctx, sess.ID)
	if err != nil {
		return Detail{}, err
	}
	lineage, err := st.Lineage(ctx, sess.ID)
	if err == nil {
		lineage, err = WithTurnCounts(ctx, st, lineage)
	}
	if err != nil {
		return Detail{}, err
	}
	tasks, err := st.Tasks(ctx, sess.ID)
	if err == nil {
		tasks, err = WithTurnCounts(ctx, st, tasks)
	}
	if err != nil {
		return Detail{}, err
	}
	first := FirstMessage(ctx, st)
	d := NewDetail(sess, lineage, turns, msgs, first)
	d.Tasks = NewSessions(tasks, first)
	return d, nil
}
