package turnapi

// Kinds of the live events a turn's workflow records, through the
// RecordEvent activity, when the turn starts and stops waiting on a person.
// They are defined here, not in internal/events with the kinds activities
// publish, because the workflows may not import internal/events (it imports
// the store); internal/events names them too (events.KindApproval, ...), so
// clients find every kind in one place. The Data of each is the JSON of the
// struct named below; a field's JSON name is part of what clients (the CLI,
// the HTTP API) read, so it changes only with them.
const (
	// EventApproval: a dangerous command waits for a person's decision.
	// Data: ApprovalEvent.
	EventApproval = "approval"
	// EventApprovalDecided: the wait for a decision ended. Data:
	// ApprovalDecidedEvent.
	EventApprovalDecided = "approval_decided"
	// EventQuestion: a clarify question waits for the user's answer. Data:
	// QuestionEvent.
	EventQuestion = "question"
	// EventAnswered: the wait for an answer ended. Data: AnsweredEvent.
	EventAnswered = "answered"
	// EventTaskStart: a delegated task's turn started. Data: TaskEvent.
	EventTaskStart = "task_start"
	// EventTaskEnd: a delegated task's turn ended. Data: TaskEvent.
	EventTaskEnd = "task_end"
)

// TaskEvent is the Data of an EventTaskStart or EventTaskEnd: the task's
// session and goal (cut for display), and how it ended.
type TaskEvent struct {
	Session    string `json:"session"`
	Goal       string `json:"goal"`
	StopReason string `json:"stop_reason,omitempty"`
}

// ApprovalEvent is the Data of an EventApproval: the command waiting, as
// the turn's progress query shows it (the same JSON names as
// workflows.PendingApproval).
type ApprovalEvent struct {
	CallID  string `json:"call_id"`
	Command string `json:"command"`
	Rule    string `json:"rule"`
	Reason  string `json:"reason"`
	// Pattern is what a session or always approval would remember.
	Pattern string `json:"pattern,omitempty"`
}

// How an approval wait ended when no decision arrived: the Choice of an
// ApprovalDecidedEvent besides the four ApprovalChoice names.
const (
	// DecidedTimeout: no decision arrived within the approval timeout; the
	// command was refused.
	DecidedTimeout = "timeout"
	// DecidedInterrupted: the turn was interrupted while it waited; the
	// command was not run.
	DecidedInterrupted = "interrupted"
)

// ApprovalDecidedEvent is the Data of an EventApprovalDecided. Choice is
// what the turn did with the command: once, session, always or deny (a
// decision whose choice was none of them counts as deny), DecidedTimeout or
// DecidedInterrupted.
type ApprovalDecidedEvent struct {
	CallID string `json:"call_id"`
	Choice string `json:"choice"`
}

// QuestionEvent is the Data of an EventQuestion (the same JSON names as
// workflows.PendingQuestion).
type QuestionEvent struct {
	CallID   string   `json:"call_id"`
	Question string   `json:"question"`
	Choices  []string `json:"choices,omitempty"`
}

// AnsweredEvent is the Data of an EventAnswered. Answered is false when the
// turn was interrupted before the user answered. The answer itself is not
// in the event: it is the call's result, stored with the conversation.
type AnsweredEvent struct {
	CallID   string `json:"call_id"`
	Answered bool   `json:"answered"`
}

// RecordEventInput appends one live event to a turn's events. Data is at
// most MaxEventDataBytes long (the activity refuses a longer one); the
// payloads above keep within it once Bounded.
type RecordEventInput struct {
	TurnID string
	Kind   string
	Data   string
}

// Bounds on the texts of an event payload, measured as JSON-encoded bytes.
// They fit with room to spare in MaxEventDataBytes (whose remainder is for
// the call id and the JSON around the fields).
const (
	maxEventCommandBytes = 4 << 10
	maxEventReasonBytes  = 1 << 10
	maxEventRuleBytes    = 256
)

// MaxEventDataBytes bounds the Data of a live event recorded by a workflow
// (RecordEventInput), so that the activity's input stays small in history.
const MaxEventDataBytes = 16 << 10

// Bounded returns e with its texts cut to the event bounds: whatever a
// command's text, the event stays within MaxEventDataBytes. Pure.
func (e ApprovalEvent) Bounded() ApprovalEvent {
	e.Command = BoundText(e.Command, maxEventCommandBytes)
	e.Rule = BoundText(e.Rule, maxEventRuleBytes)
	e.Reason = BoundText(e.Reason, maxEventReasonBytes)
	e.Pattern = BoundText(e.Pattern, maxEventCommandBytes)
	return e
}

// Bounded returns e with its question and choices cut as a call ref's are
// (MaxQuestionBytes, MaxChoices of MaxChoiceBytes), sharing no memory with
// e. Pure.
func (e QuestionEvent) Bounded() QuestionEvent {
	e.Question = BoundText(e.Question, MaxQuestionBytes)
	if e.Choices == nil {
		return e
	}
	choices := make([]string, 0, min(len(e.Choices), MaxChoices))
	for _, c := range e.Choices[:min(len(e.Choices), MaxChoices)] {
		choices = append(choices, BoundText(c, MaxChoiceBytes))
	}
	e.Choices = choices
	return e
}
