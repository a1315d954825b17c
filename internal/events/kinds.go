package events

import (
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// Kinds of events. Data is text for the streamed kinds and small JSON (or
// nothing) for the others.
const (
	KindDelta     = "delta"      // a piece of the reply text
	KindReasoning = "reasoning"  // a piece of the model's reasoning text
	KindToolStart = "tool_start" // a tool call begins
	KindToolEnd   = "tool_end"   // a tool call ended
	KindStatus    = "status"     // a change of the turn's state
	KindWait      = "wait"       // the turn waits: a retry's delay, a slow model (text)
	KindDone      = "done"       // the turn ended; the last event of a turn
	// KindAttempt begins an attempt of a model call (Data: AttemptEvent):
	// the text of that call shown so far is replaced by what follows.
	KindAttempt = models.KindAttempt
)

// AttemptEvent is the data of a KindAttempt event.
type AttemptEvent struct {
	Call    int `json:"call"`
	Attempt int `json:"attempt"`
}

// Kinds of the events the turn's workflow records (through the RecordEvent
// activity) while it waits on a person. Their names and JSON payloads are
// defined in internal/turnapi, which the workflows may import (this package
// may not be: it imports the store); these are the same strings.
const (
	// KindApproval: a dangerous command waits for a decision. Data:
	// turnapi.ApprovalEvent, {"call_id","command","rule","reason","pattern"}.
	KindApproval = turnapi.EventApproval
	// KindApprovalDecided: the wait for a decision ended. Data:
	// turnapi.ApprovalDecidedEvent, {"call_id","choice"}; choice is once,
	// session, always or deny, "timeout" or "interrupted".
	KindApprovalDecided = turnapi.EventApprovalDecided
	// KindQuestion: a clarify question waits for the user's answer. Data:
	// turnapi.QuestionEvent, {"call_id","question","choices"}.
	KindQuestion = turnapi.EventQuestion
	// KindAnswered: the wait for an answer ended. Data: turnapi.AnsweredEvent,
	// {"call_id","answered"}; answered is false when the turn was
	// interrupted first. The answer's text is not in the event.
	KindAnswered = turnapi.EventAnswered
	// KindTaskStart and KindTaskEnd: a delegated task's turn started or
	// ended. Data: turnapi.TaskEvent, {"session","goal","stop_reason"}.
	KindTaskStart = turnapi.EventTaskStart
	KindTaskEnd   = turnapi.EventTaskEnd
)

// streamed reports whether events of kind carry pieces of one text, which
// may be merged when the buffer is full.
func streamed(kind string) bool { return kind == KindDelta || kind == KindReasoning }
