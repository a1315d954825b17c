package models

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// SessionSummary is what a past session was about (topic, decisions,
// facts), written when it ended, for recall across sessions. It goes with
// its session (DeleteSession).
type SessionSummary struct {
	ID        int64  `gorm:"primaryKey;autoIncrement"`
	SessionID string `gorm:"uniqueIndex;size:128;not null"`
	Summary   string `gorm:"type:text;serializer:text"`
	// Model wrote the summary ("" when it was a compaction's summary
	// whose model is not known).
	Model string `gorm:"size:256;not null;default:'';serializer:text"`
	// Turns is the session's turn count when the summary was written: a
	// session that went on since is summarised again.
	Turns int `gorm:"not null;default:0"`
	// Embedding is the summary's vector from the embeddings endpoint
	// (little-endian float32s; empty without one).
	Embedding []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TableName is session_summaries.
func (SessionSummary) TableName() string { return "session_summaries" }

// Vector is the summary's embedding (nil when it has none).
func (s *SessionSummary) Vector() []float32 { return DecodeVector(s.Embedding) }

// EncodeVector is the stored form of a vector. Pure.
func EncodeVector(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	out := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out
}

// DecodeVector reads a stored vector (nil for a malformed one). Pure.
func DecodeVector(b []byte) []float32 {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// recallBlock is the block of recalled text a turn's model calls carry,
// stored once per turn so that a retried call reuses it.
type recallBlock struct {
	TurnID    string `gorm:"primaryKey;size:256"`
	SessionID string `gorm:"index;size:128;not null"`
	Block     string `gorm:"type:text;serializer:text"`
	CreatedAt time.Time
}

func (recallBlock) TableName() string { return "recall_blocks" }

// PutSummary stores the summary of a session, replacing an earlier one.
func (s *Store) PutSummary(ctx context.Context, sum SessionSummary) error {
	if err := checkID("session ID", sum.SessionID, maxSessionIDLen); err != nil {
		return fmt.Errorf("models: put summary: %w", err)
	}
	sum.ID = 0
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "session_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"summary", "model", "turns", "embedding", "updated_at"}),
	}).Create(&sum).Error
	if err != nil {
		return fmt.Errorf("models: put the summary of session %q: %w", sum.SessionID, err)
	}
	return nil
}

// Summary is the stored summary of a session; ErrNotFound when it has none.
func (s *Store) Summary(ctx context.Context, sessionID string) (*SessionSummary, error) {
	var out SessionSummary
	if err := s.db.WithContext(ctx).Where("session_id = ?", sessionID).Take(&out).Error; err != nil {
		return nil, fmt.Errorf("models: summary of session %q: %w", sessionID, notFound(err))
	}
	return &out, nil
}

// Summaries are the stored summaries of the given sessions, by session.
func (s *Store) Summaries(ctx context.Context, sessionIDs []string) (map[string]SessionSummary, error) {
	out := map[string]SessionSummary{}
	if len(sessionIDs) == 0 {
		return out, nil
	}
	var rows []SessionSummary
	if err := s.db.WithContext(ctx).Where("session_id IN ?", sessionIDs).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("models: summaries: %w", err)
	}
	for _, r := range rows {
		out[r.SessionID] = r
	}
	return out, nil
}

// SummaryCounts counts the stored summaries and those with a vector.
func (s *Store) SummaryCounts(ctx context.Context) (summaries, vectors int64, err error) {
	db := s.db.WithContext(ctx).Model(&SessionSummary{})
	if err := db.Count(&summaries).Error; err != nil {
		return 0, 0, fmt.Errorf("models: count summaries: %w", err)
	}
	if err := s.db.WithContext(ctx).Model(&SessionSummary{}).Where("embedding IS NOT NULL").Count(&vectors).Error; err != nil {
		return 0, 0, fmt.Errorf("models: count summary vectors: %w", err)
	}
	return summaries, vectors, nil
}

// SummaryVector is a summary's vector, with the session it belongs to.
type SummaryVector struct {
	SessionID string
	At        time.Time
	Vector    []float32
}

// maxVectors bounds the vectors one semantic search scores.
const maxVectors = 20000

// SummaryVectors are the vectors of the summaries of the sessions within
// scope outside the lineage exceptLineage, newest first, at most
// maxVectors.
func (s *Store) SummaryVectors(ctx context.Context, scope Scope, exceptLineage string) ([]SummaryVector, error) {
	var rows []struct {
		SessionID string
		UpdatedAt time.Time
		Embedding []byte
	}
	inScope, args := scope.sessionCond("s")
	err := s.db.WithContext(ctx).Table("session_summaries AS m").
		Select("m.session_id, m.updated_at, m.embedding").
		Joins("JOIN sessions s ON s.id = m.session_id").
		Where("m.embedding IS NOT NULL AND "+lineageOf("s")+" <> ?"+inScope, append([]any{exceptLineage}, args...)...).
		Order("m.id DESC").Limit(maxVectors).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("models: summary vectors: %w", err)
	}
	out := make([]SummaryVector, 0, len(rows))
	for _, r := range rows {
		if v := DecodeVector(r.Embedding); v != nil {
			out = append(out, SummaryVector{SessionID: r.SessionID, At: r.UpdatedAt, Vector: v})
		}
	}
	return out, nil
}

// lineageOf is the SQL expression of the lineage of the sessions aliased
// alias (rows written before lineages have their own id).
func lineageOf(alias string) string {
	return "COALESCE(NULLIF(" + alias + ".lineage_id, ''), " + alias + ".id)"
}

// SessionsToSummarize are sessions whose last turn began before `before`
// and that have no summary, or one written before their latest turn:
// sessions a person or job talked in, not the engine's own. At most limit
// of them, least recently active first.
func (s *Store) SessionsToSummarize(ctx context.Context, before time.Time, limit int) ([]Session, error) {
	var out []Session
	err := s.db.WithContext(ctx).Table("sessions AS s").Select("s.*").
		Joins("LEFT JOIN session_summaries m ON m.session_id = s.id").
		Where("s.updated_at < ? AND s.turn_count > 0 AND substr(s.id, 1, ?) <> ? AND (m.id IS NULL OR m.turns < s.turn_count)",
			before.UTC(), len(ReviewSessionPrefix), ReviewSessionPrefix).
		Order("s.updated_at").Limit(limit).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: sessions to summarise: %w", err)
	}
	return out, nil
}

// PutRecallBlock stores the recalled block of a turn, unless one is stored
// already, and returns the one stored: every call of the turn, and every
// retry, carries the same block.
func (s *Store) PutRecallBlock(ctx context.Context, sessionID, turnID, block string) (string, error) {
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&recallBlock{TurnID: turnID, SessionID: sessionID, Block: block}).Error
	if err != nil {
		return "", fmt.Errorf("models: put the recall block of turn %q: %w", turnID, err)
	}
	stored, _, err := s.RecallBlock(ctx, turnID)
	return stored, err
}

// RecallBlock is the recalled block stored for a turn; ok is false when
// none is stored.
func (s *Store) RecallBlock(ctx context.Context, turnID string) (block string, ok bool, err error) {
	var row recallBlock
	err = s.db.WithContext(ctx).Where("turn_id = ?", turnID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("models: the recall block of turn %q: %w", turnID, err)
	}
	return row.Block, true, nil
}
