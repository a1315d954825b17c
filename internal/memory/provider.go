package memory

import (
	"context"
	"errors"
	"time"

	"github.com/talaria-agent/talaria/internal/tools"
)

// Provider is a source of recall across sessions.
type Provider interface {
	// Name is the provider's name in configuration and logs ("recall",
	// "honcho", "mem0", "supermemory").
	Name() string
	// Prefetch recalls what bears on a turn's first message. It returns
	// within ctx's deadline (the prefetch budget) or gives up.
	Prefetch(ctx context.Context, q Query) (Recall, error)
	// Sync records a finished turn.
	Sync(ctx context.Context, t Turn) error
	// EndSession is told that a session ended (idle, reset, compaction,
	// deletion is not an end: see Forget).
	EndSession(ctx context.Context, e SessionEnd) error
	// Forget removes what the provider holds of a deleted session.
	Forget(ctx context.Context, sessionID string) error
	// Tools are the provider's own tools, offered only while it is on
	// (nil: none).
	Tools() []tools.Tool
}

// Query is what a prefetch looks for: the message, questions like it
// (Expansions, from the auxiliary model when one is configured), the
// session asking (never recalled from itself) and the user.
type Query struct {
	SessionID  string
	User       string
	Text       string
	Expansions []string
	// Limit bounds the sessions recalled (0: DefaultLimit).
	Limit int
}

// DefaultLimit is how many past sessions a prefetch recalls at most.
const DefaultLimit = 3

// Recall is what a prefetch found, best first.
type Recall struct {
	Items []Item
}

// Item is one recalled piece: a past session's summary and its passages
// that matched, or a fact an external provider holds.
type Item struct {
	// SessionID and At say where it comes from ("" for a provider's
	// fact with no session).
	SessionID string    `json:"session_id"`
	At        time.Time `json:"at"`
	Summary   string    `json:"summary"`
	Passages  []string  `json:"passages"`
	// Score orders items (higher is nearer); comparable within a recall.
	Score float64 `json:"score"`
}

// Turn is a finished turn, as Sync records it.
type Turn struct {
	SessionID, TurnID, User string
	UserMessage, Answer     string
	At                      time.Time
}

// SessionEnd says that a session ended and why.
type SessionEnd struct {
	SessionID, User string
	Reason          EndReason
	At              time.Time
	// Summary is the session's summary as Talaria stored it ("" when it
	// has none: a session without a conversation).
	Summary string
}

// SummaryKind is the talaria_kind an external provider's record of a
// session's summary carries in its metadata.
const SummaryKind = "session_summary"

// EndReason is why a session ended.
type EndReason string

// The reasons a session ends.
const (
	EndIdle       EndReason = "idle"
	EndReset      EndReason = "reset"
	EndCompaction EndReason = "compaction"
)

// ErrUnavailable wraps a provider's failure to answer (down, slow, or
// refusing): the turn goes on without it.
var ErrUnavailable = errors.New("memory: provider unavailable")
