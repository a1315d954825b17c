package turnapi

import (
	"time"

	"github.com/talaria-agent/talaria/internal/loop"
)

// AnswerCallsInput names a batch that ended without a result: the batch as
// it was scheduled, and why it ended.
type AnswerCallsInput struct {
	Batch ExecuteToolsInput
	// Interrupted: the turn was stopped during the batch; otherwise the
	// batch failed with Reason.
	Interrupted bool
	Reason      string `json:",omitempty"`
}

// AnswerCallsResult lists the answers stored now (none when the batch had
// stored every result itself).
type AnswerCallsResult struct {
	ResultMessageIDs []int64 `json:",omitempty"`
}

// PrepareReviewInput copies a conversation into a review session.
type PrepareReviewInput struct {
	SessionID       string
	ReviewSessionID string
	// MaxMessages bounds how much of the conversation is reviewed (the last ones).
	MaxMessages int
}

// Usage counts tokens reported by the provider.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	// CacheReadTokens and CacheWriteTokens are the prompt tokens read
	// from and written to the provider's prompt cache.
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	// CostUSD is what the calls cost at the models' prices (0 when no
	// price is known).
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		TotalTokens:      u.TotalTokens + o.TotalTokens,
		CacheReadTokens:  u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
		CostUSD:          u.CostUSD + o.CostUSD,
	}
}

// BeginTurnInput starts a turn: the session is created when new and the
// user's message is persisted.
type BeginTurnInput struct {
	TurnID      string
	SessionID   string
	TurnNumber  int
	Model       string
	UserMessage string
	StartedAt   time.Time
	// Workdir is where the user works: the prompt builder reads project
	// context files there.
	Workdir string
	// Tools are the tools the turn offers (empty: all); their schemas count
	// towards the context size.
	Tools []string `json:",omitempty"`
	// Images are the pictures sent with the user's message.
	Images []Image `json:",omitempty"`
	// DelegatedFrom is the session whose delegate_task call started this
	// turn's session (a task's child turn); empty otherwise.
	DelegatedFrom string `json:",omitempty"`
	// Owner is whose session this is (models.Session.Owner): a new session
	// is made the owner's; empty for the operator's.
	Owner string `json:",omitempty"`
	// CompactionRatio, when set, asks the worker for the turn's compaction
	// threshold: this share of the model's context window as the worker
	// knows it, less the reply cap (WorkerModel.CompactionThreshold).
	CompactionRatio float64 `json:",omitempty"`
}

// BeginTurnResult names the persisted user message.
type BeginTurnResult struct {
	UserMessageID int64
	// Providers is how many model providers this worker can use for the
	// turn's model: the primary and its fallbacks, in order.
	Providers int
	// Grants are the kinds of dangerous commands already approved for this
	// session or always.
	Grants Grants
	// SessionID is where the conversation continues: the newest session of
	// the requested one's lineage (it differs after a compaction).
	SessionID string `json:",omitempty"`
	// ContextTokens is the size of the conversation, user message included.
	ContextTokens int `json:",omitempty"`
	// ApprovalPolicy is the serving worker's approval mode (ask, off or
	// deny): a turn never runs under a looser mode than this, whatever its
	// sender asked for. Empty: no policy (turns recorded before it existed).
	ApprovalPolicy string `json:",omitempty"`
	// Worker is the model configuration of the worker that began the
	// turn, for a turn whose sender named no model settings of its own.
	// Nil in results recorded before it existed.
	Worker *WorkerModel `json:",omitempty"`
}

// TurnPolicyInput names the session (as its user named it) whose grants a
// continued run of a turn needs.
type TurnPolicyInput struct {
	SessionID string
}

// TurnPolicyResult is what bounds a continued run: the serving worker's
// approval mode and the grants in the store, never what the run's input
// carried.
type TurnPolicyResult struct {
	ApprovalPolicy string
	Grants         Grants
}

// SaveGrantInput records a session or always approval.
type SaveGrantInput struct {
	SessionID string
	Choice    ApprovalChoice
	// Rule is the grant key (Assessment.GrantKey): a command
	// pattern, or a rule id in turns recorded before patterns existed.
	Rule string
}

// CallModelInput asks for one model call over the session's stored messages.
type CallModelInput struct {
	TurnID    string
	SessionID string
	// Call is the 1-based number of this model call within the turn; with
	// TurnID it forms the idempotency key of the reply.
	Call  int
	Model string
	// ToolsEnabled offers the tool registry; false forces a text answer.
	ToolsEnabled bool
	// Tools limits the offered tools to these names (empty: all).
	Tools []string
	// ExtraUserMessage is appended to the request only, never persisted
	// (e.g. the request for a summary at the iteration cap, or a nudge).
	ExtraUserMessage string
	Workdir          string
	// Provider indexes the provider list: 0 is the primary, then fallbacks.
	Provider int
	// MaxTokens overrides the configured output cap when positive.
	MaxTokens int
	// PrefillFrom names a stored reasoning-only reply whose reasoning is sent
	// back as the start of the assistant's answer (request only).
	PrefillFrom int64
	// ContinueFrom names stored parts of an answer cut off by the output
	// limit; they are sent as the assistant's text so far (request only).
	ContinueFrom []int64
	// Steers are user messages that arrived while the turn ran; they are
	// stored (as steer messages) before the call, so the model sees them.
	Steers []string
	// IdleTimeout ends the call once the model makes no progress for this
	// long (0: DefaultModelIdleTimeout); MaxRetryAfter caps the wait a
	// provider asks for before the next attempt (0: DefaultMaxRetryAfter).
	IdleTimeout   time.Duration
	MaxRetryAfter time.Duration
}

// ToolCallRef identifies one requested tool call without its arguments.
type ToolCallRef struct {
	ID string
	// Name is the repaired name of a known tool, or the name as sent.
	Name string
	// Unknown: no tool of that name exists, even after repair.
	Unknown bool
	// Args classifies the argument text.
	Args loop.ArgsStatus
	// Key identifies the call's name and canonical arguments (a digest), for
	// the guardrail controller.
	Key string
	// Risk of a terminal command: safe, dangerous (needs approval) or
	// blocked (never run); Command is the command, for the approval prompt.
	Risk    Assessment `json:",omitempty"`
	Command string     `json:",omitempty"`
	// Question and Choices of a clarify call.
	Question string   `json:",omitempty"`
	Choices  []string `json:",omitempty"`
	// Quick: the tool finishes in milliseconds on the worker (see
	// tools.QuickTool), so a batch of quick calls may run as a local activity.
	Quick bool `json:",omitempty"`
}

// CallModelResult describes the persisted reply.
type CallModelResult struct {
	MessageID    int64
	FinishReason string
	ToolCalls    []ToolCallRef
	Kind         loop.ReplyKind
	// Hidden: the reply was stored out of the conversation (see
	// loop.ReplyKind.Discarded).
	Hidden bool
	// TextChars is the length of the visible text (reasoning blocks removed).
	TextChars      int
	ReasoningChars int
	// Recovered: the stream broke after text arrived and that text is the reply.
	Recovered bool
	Usage     Usage
	// ContextTokens is the size of the conversation after this reply: the
	// prompt and completion tokens the provider reported, else an estimate.
	ContextTokens int `json:",omitempty"`
	// Model is the model the reply was asked of (empty: a reply found
	// stored, or one recorded before it existed).
	Model string `json:",omitempty"`
}

// ExecuteToolsInput runs the tool calls of one assistant message.
type ExecuteToolsInput struct {
	TurnID             string
	SessionID          string
	Call               int
	AssistantMessageID int64
	Workdir            string
	// Plan decides per call id; calls it does not mention run.
	Plan []CallPlan
	// Reveal brings a hidden assistant message into the conversation.
	Reveal bool
	// Explanation, when set, is stored after the results as an assistant
	// message (why the turn stops).
	Explanation string
	// Tools are the tools the turn may use (empty: all).
	Tools []string
	// ApprovalMode is the turn's approval mode (ask, off, deny; empty:
	// ask): it decides which terminal commands an execute_code program
	// may run without a person (only safe ones, unless off).
	ApprovalMode string `json:",omitempty"`
}

// CallOutcome is what the guardrail controller learns from one call.
type CallOutcome struct {
	ID     string
	Failed bool
	// Digest is a short hash of the result text.
	Digest string
}

// ExecuteToolsResult summarises a tool batch.
type ExecuteToolsResult struct {
	ResultMessageIDs []int64
	Failed           int
	Outcomes         []CallOutcome
	// HookHalt is the reason a pluggable guardrail hook halted the batch.
	HookHalt string
	// AddedTokens estimates the size of the stored results, (chars+3)/4.
	AddedTokens int `json:",omitempty"`
}

// FinishTurnInput records how a turn ended.
type FinishTurnInput struct {
	TurnID     string
	SessionID  string
	TurnNumber int
	Model      string
	Status     string
	ExitReason string
	Error      string
	APICalls   int
	Usage      Usage
	// FinalParts are the stored replies whose text, joined, is the final
	// answer: one visible reply is used as is; hidden parts (an answer that
	// was continued after hitting the output limit) are joined into a new
	// visible assistant message.
	FinalParts []int64
	StartedAt  time.Time
	EndedAt    time.Time
}

// FinishTurnResult names the final answer. Its text lives in the store: the
// result carries it whole only when it fits in MaxPreviewBytes, otherwise
// its beginning (Clipped), so a reply of any size never reaches workflow
// history.
type FinishTurnResult struct {
	// FinalResponse is the final answer, or its beginning when Clipped.
	FinalResponse string
	HasFinal      bool
	// FinalMessageID is the stored assistant message holding the answer
	// (zero in results recorded before it existed).
	FinalMessageID int64 `json:",omitempty"`
	// Clipped: FinalResponse is a preview; the full text is the message
	// FinalMessageID (transcript.StripThinking of its content).
	Clipped bool `json:",omitempty"`
}

// Compaction reasons.
const (
	// CompactPreflight: the conversation passed the size threshold.
	CompactPreflight = "preflight"
	// CompactOverflow: the provider refused a request as too long.
	CompactOverflow = "overflow"
	// CompactManual: someone asked for it between turns (chat /compress,
	// talaria sessions compact).
	CompactManual = "manual"
)

// CompressContextInput asks for one compaction of a session's context.
type CompressContextInput struct {
	TurnID    string
	SessionID string
	Model     string
	// Provider indexes the provider that writes the summary.
	Provider int
	Workdir  string
	// Reason is CompactPreflight, CompactOverflow or CompactManual.
	Reason string
	// SkipSummary: the summariser failed recently; use the static summary
	// without a model call.
	SkipSummary bool
	// Tools are the tools the turn offers (their schemas count).
	Tools []string
	// IdleTimeout and MaxRetryAfter bound the summary's model call as
	// CallModelInput's do (0: the defaults, as in histories before them).
	IdleTimeout   time.Duration `json:",omitempty"`
	MaxRetryAfter time.Duration `json:",omitempty"`
}

// CompressContextResult says where the conversation continues.
type CompressContextResult struct {
	// SessionID is the session to continue in: the new child session, or
	// the same one when nothing could be compacted.
	SessionID string
	// Compacted: a child session was created (or found from a previous try).
	Compacted bool
	// Before and After estimate the context in tokens.
	Before, After int
	// Fallback: the summariser failed and the static summary was used;
	// SummaryError says why.
	Fallback     bool   `json:",omitempty"`
	SummaryError string `json:",omitempty"`
	// Usage is the summary call's (zero when none was made).
	Usage Usage `json:",omitempty"`
}

// Image is a picture sent with a user message. Its bytes are stored once
// (Attachment, by ID) so that any worker's model call can show it to a
// model that sees; URL is a remote picture (the API's image_url by
// address), passed on to the provider and never fetched by Talaria. Path is
// where the picture was also saved in the working directory, for tools.
type Image struct {
	ID   string `json:"id,omitempty"`
	URL  string `json:"url,omitempty"`
	MIME string `json:"mime,omitempty"`
	Name string `json:"name,omitempty"`
	Path string `json:"path,omitempty"`
	Size int64  `json:"size,omitempty"`
}
