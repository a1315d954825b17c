package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/injection"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/models"
)

// BuiltinRecall is the built-in provider: it recalls past sessions from
// Talaria's own store, by full-text search over their summaries and
// messages and, with an embeddings endpoint, by the meaning of their
// summaries. Summaries are written by the engine when a session ends (see
// workflows.SummaryWorkflow); a session's summary and vector go with it
// (models.Store.DeleteSession).
type BuiltinRecall struct {
	store *models.Store
	embed Embedder
	log   *slog.Logger
}

// NewRecall is the built-in provider over store; embed nil searches by
// text only; logger nil: slog.Default().
func NewRecall(store *models.Store, embed Embedder, logger *slog.Logger) *BuiltinRecall {
	return &BuiltinRecall{store: store, embed: embed, log: cmp.Or(logger, slog.Default())}
}

// Name is "recall".
func (r *BuiltinRecall) Name() string { return config.MemoryRecall }

// Embedder is the provider's embedder (nil: text only).
func (r *BuiltinRecall) Embedder() Embedder { return r.embed }

// Bounds of what one item carries.
const (
	// recallPassageBytes bounds one passage.
	recallPassageBytes = 300
	// recallSummaryBytes bounds one summary.
	recallSummaryBytes = 1200
)

// Prefetch finds the past sessions bearing on q's message: never q's own
// session or its lineage, and only sessions of the asking session's owner
// when it has one (a gateway chat's session recalls only that chat's
// sessions; the operator's recall every session: models.Scope). A query
// without a session is the operator's; one whose session is not stored
// recalls nothing (whose it is is not known). Everything it returns passed
// injection.Scan: a summary or passage with a finding is left out, with a
// warning.
func (r *BuiltinRecall) Prefetch(ctx context.Context, q Query) (Recall, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	scope, lineage, err := r.asking(ctx, q.SessionID)
	if errors.Is(err, models.ErrNotFound) {
		r.log.Warn("recall: the asking session is not stored; nothing recalled", "session", q.SessionID)
		return Recall{}, nil
	}
	if err != nil {
		return Recall{}, err
	}
	words := recallQueryWords(q.Text, q.Expansions)
	summaries, err := r.store.SearchSummaries(ctx, scope, words, lineage, limit*4)
	if err != nil {
		return Recall{}, fmt.Errorf("recall: %w", err)
	}
	passages, err := r.store.SearchPassages(ctx, scope, words, lineage, limit*10)
	if err != nil {
		return Recall{}, fmt.Errorf("recall: %w", err)
	}
	cosines, err := r.cosines(ctx, q.Text, scope, lineage)
	if err != nil {
		if ctx.Err() != nil {
			return Recall{}, fmt.Errorf("recall: %w", ctx.Err())
		}
		r.log.Warn("recall: the embeddings endpoint did not answer; recalling by text only", "error", err)
	}
	ranked := rankRecall(summaries, passages, cosines, limit)
	ids := make([]string, len(ranked))
	for i, s := range ranked {
		ids[i] = s.SessionID
	}
	stored, err := r.store.Summaries(ctx, ids)
	if err != nil {
		return Recall{}, fmt.Errorf("recall: %w", err)
	}
	var out Recall
	for _, s := range ranked {
		it := Item{SessionID: s.SessionID, Score: s.Score}
		if sum, ok := stored[s.SessionID]; ok {
			it.At = sum.UpdatedAt
			if r.clean(s.SessionID, "summary", sum.Summary) {
				it.Summary = recallExcerpt(sum.Summary, nil, recallSummaryBytes)
			}
		}
		for _, p := range s.Passages {
			if it.At.IsZero() || p.At.After(it.At) {
				it.At = p.At
			}
			if r.clean(s.SessionID, "passage", p.Content) {
				it.Passages = append(it.Passages, p.Role+": "+recallExcerpt(p.Content, words, recallPassageBytes))
			}
		}
		if it.Summary != "" || len(it.Passages) > 0 {
			out.Items = append(out.Items, it)
		}
	}
	return out, nil
}

// asking is whose sessions the asking session recalls (its owner's) and
// its lineage, which it does not recall; without a session, the
// operator's and none. A session not stored is models.ErrNotFound.
func (r *BuiltinRecall) asking(ctx context.Context, sessionID string) (models.Scope, string, error) {
	if sessionID == "" {
		return models.Scope{}, "", nil
	}
	sess, err := r.store.Session(ctx, sessionID)
	if err != nil {
		return models.Scope{}, "", fmt.Errorf("recall: %w", err)
	}
	return models.ScopeOf(sess), cmp.Or(sess.LineageID, sess.ID), nil
}

// cosines are the similarities of the message to the stored summaries'
// vectors (nil without an embedder).
func (r *BuiltinRecall) cosines(ctx context.Context, text string, scope models.Scope, lineage string) (map[string]float64, error) {
	if r.embed == nil || strings.TrimSpace(text) == "" {
		return nil, nil
	}
	vecs, err := r.store.SummaryVectors(ctx, scope, lineage)
	if err != nil || len(vecs) == 0 {
		return nil, err
	}
	got, err := r.embed.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(vecs))
	for _, v := range vecs {
		out[v.SessionID] = Cosine(got[0], v.Vector)
	}
	return out, nil
}

// clean reports whether text may be shown to the model; one that looks
// like a prompt injection is left out with a warning.
func (r *BuiltinRecall) clean(sessionID, what, text string) bool {
	findings := injection.Scan(text)
	if len(findings) == 0 {
		return true
	}
	r.log.Warn("recall: a recalled "+what+" looks like a prompt injection; left out",
		"session", sessionID, "rule", findings[0].Rule, "excerpt", findings[0].Excerpt)
	return false
}

// Sync does nothing: the transcript is in the store already.
func (r *BuiltinRecall) Sync(context.Context, Turn) error { return nil }

// EndSession does nothing: the engine writes the summary
// (workflows.SummaryWorkflow).
func (r *BuiltinRecall) EndSession(context.Context, SessionEnd) error { return nil }

// Forget does nothing: deleting a session deletes its summary and vector.
func (r *BuiltinRecall) Forget(context.Context, string) error { return nil }

// Tools: none (session_search is always offered).
func (r *BuiltinRecall) Tools() []tools.Tool { return nil }
