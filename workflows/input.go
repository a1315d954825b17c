package workflows

import (
	"cmp"
	"time"

	"github.com/talaria-agent/talaria/internal/turnapi"

	"github.com/talaria-agent/talaria/internal/loop"
)

// Defaults for TurnInput fields left zero.
const (
	DefaultMaxIterations    = 90
	DefaultModelTimeout     = 5 * time.Minute
	DefaultMaxRetryAfter    = 5 * time.Minute
	DefaultToolTimeout      = 2 * time.Hour
	DefaultHeartbeatTimeout = 10 * time.Second
	DefaultModelAttempts    = 6
)

// TurnInput starts one turn. It is small on purpose: the conversation is in
// the store, referenced by SessionID.
type TurnInput struct {
	SessionID     string
	TurnNumber    int
	UserMessage   string
	Model         string
	MaxIterations int
	// Workdir is the directory tools resolve relative paths against.
	Workdir string
	// ModelTimeout is how long one model call may go without progress (no
	// answer to a plain call, no chunk of a stream); a stream lives as long
	// as chunks keep coming, under a wall-clock bound of modelCallLimit.
	// ToolTimeout bounds one tool batch.
	ModelTimeout time.Duration
	ToolTimeout  time.Duration
	// MaxRetryAfter caps the wait a provider asks for (Retry-After) before
	// the next attempt of a model call.
	MaxRetryAfter time.Duration
	// HeartbeatTimeout is how soon an activity whose worker died is retried.
	HeartbeatTimeout time.Duration
	// ModelAttempts bounds the tries of one model call (retryable errors).
	ModelAttempts int
	// Limits bound the loop's recovery steps.
	Limits loop.Limits
	// Approvals say how dangerous commands and clarify questions are handled.
	Approvals ApprovalSettings
	// Tools limits the tools offered to the model (empty: all).
	Tools []string
	// MemoryReviewEvery: after every this many turns of the session, a
	// background review updates the agent's memory (0: DefaultMemoryReviewEvery;
	// negative: never).
	MemoryReviewEvery int
	// MemorySync: once the turn has answered, its session's coordinator
	// (or, for a scheduled job's turn, the job's run) has the memory
	// provider record it (MemorySyncWorkflow); set when an external memory
	// provider is on (memory.provider).
	MemorySync bool `json:",omitempty"`
	// ContinueEvery: the turn continues as new after this many iterations in
	// one run, or earlier when Temporal suggests it (0: DefaultContinueEvery;
	// negative: never, for reference runs in tests).
	ContinueEvery int
	// Compaction says when the conversation is compacted. Zero values turn
	// it off, and no default is filled in here: turns started before
	// compaction existed replay without it.
	Compaction CompactionSettings
	// Delegation bounds the sub-agents this turn's delegate_task calls
	// start, and says how deep this turn is.
	Delegation DelegationSettings `json:",omitempty"`
	// Images are the pictures sent with UserMessage (stored bytes, by
	// reference: never the bytes themselves).
	Images []turnapi.Image `json:",omitempty"`
	// DelegatedFrom is the session whose delegate_task call started this
	// turn (a sub-agent's); empty for every other turn.
	DelegatedFrom string `json:",omitempty"`
	// Owner is whose session the turn makes when the session is new: the
	// gateway chat's key for a chat's turn, goal or cron job (see
	// models.Session.Owner); empty for the operator's. A session that
	// exists keeps its owner, and one of another owner fails the turn.
	Owner string `json:",omitempty"`
	// ReportTo is the turn a person follows, for a task's turn: the live
	// events of what it asks a person (an approval) go there too.
	ReportTo string `json:",omitempty"`
	// Steers are steers the turn starts with (a goal's turn: those its
	// previous turn handed back or that came between turns); its first
	// model call delivers them.
	Steers []string `json:",omitempty"`
	// ReportEnd: the turn tells its session's coordinator of its end
	// (SignalTurnEnded); set by coordinators of older code that start it,
	// and carried by a continued turn that was asked to (SignalReportEnd).
	ReportEnd bool `json:",omitempty"`
	// Resume is the state carried across continue-as-new; nil when the turn
	// starts.
	Resume *TurnCarry
}

// CompactionSettings say when a turn compacts its conversation.
type CompactionSettings struct {
	// Threshold: before a model call, compact when the context is larger
	// than this many tokens (0: only when the provider refuses a request).
	Threshold int
	// Ratio, when set with Threshold, makes the threshold the model's:
	// this share of the context window the worker knows for the turn's
	// model, less the reply cap. Threshold is what holds when the worker
	// knows no window (or does not say).
	Ratio float64 `json:",omitempty"`
	// OverflowAttempts bounds the compactions tried for one model call the
	// provider refused as too long (0: the call fails the turn).
	OverflowAttempts int
	// Cooldown: after the summariser fails, compactions use the static
	// summary for this long instead of calling it again.
	Cooldown time.Duration
}

// DefaultContinueEvery bounds the iterations of one run of a turn: about
// 12 history events each, far below Temporal's limits.
const DefaultContinueEvery = 200

// TurnCarry is what a turn carries into its next run.
type TurnCarry struct {
	State     TurnState
	StartedAt time.Time
	Grants    turnapi.Grants
	// Runs counts the runs before this one.
	Runs int
}

// withDefaults fills zero fields.
func (in TurnInput) withDefaults() TurnInput {
	if in.MaxIterations <= 0 {
		in.MaxIterations = DefaultMaxIterations
	}
	if in.ModelTimeout <= 0 {
		in.ModelTimeout = DefaultModelTimeout
	}
	if in.ToolTimeout <= 0 {
		in.ToolTimeout = DefaultToolTimeout
	}
	if in.MaxRetryAfter <= 0 {
		in.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if in.HeartbeatTimeout <= 0 {
		in.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if in.ModelAttempts <= 0 {
		in.ModelAttempts = DefaultModelAttempts
	}
	in.Limits = in.Limits.WithDefaults()
	in.Approvals.Mode = cmp.Or(in.Approvals.Mode, ApprovalAsk)
	if in.Approvals.Timeout <= 0 {
		in.Approvals.Timeout = DefaultApprovalTimeout
	}
	return in
}
