package talaria

import (
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

// A turn's vocabulary: its inputs, results, progress, signals and live
// events.

// From package workflows.
type (
	BusyMode           = workflows.BusyMode
	ConversationResult = workflows.ConversationResult
	GoalBudget         = workflows.GoalBudget
	GoalInput          = workflows.GoalInput
	GoalProgress       = workflows.GoalProgress
	GoalTurn           = workflows.GoalTurn
	Message            = workflows.Message
	Progress           = workflows.Progress
)

const (
	ApprovalDeny    = workflows.ApprovalDeny
	BusySteer       = workflows.BusySteer
	GoalDone        = workflows.GoalDone
	NoUserAnswer    = workflows.NoUserAnswer
	SignalSteer     = workflows.SignalSteer
	StopError       = workflows.StopError
	StopInterrupted = workflows.StopInterrupted
)

var (
	CompactionReport = workflows.CompactionReport
	CronSessionID    = workflows.CronSessionID
	GoalWorkflowID   = workflows.GoalWorkflowID
	ParseBusyMode    = workflows.ParseBusyMode
	SearchAttributes = workflows.SearchAttributes
)

// From package turnapi.
type (
	ApprovalChoice = turnapi.ApprovalChoice
	TaskEvent      = turnapi.TaskEvent
)

const (
	ChoiceAlways  = turnapi.ChoiceAlways
	ChoiceDeny    = turnapi.ChoiceDeny
	ChoiceOnce    = turnapi.ChoiceOnce
	ChoiceSession = turnapi.ChoiceSession
)

var (
	ParseApprovalChoice = turnapi.ParseApprovalChoice
)

// From package events.
type (
	ShownEvent = events.Shown
)

const (
	KindAnswered        = events.KindAnswered
	KindApproval        = events.KindApproval
	KindApprovalDecided = events.KindApprovalDecided
	KindAttempt         = events.KindAttempt
	KindDelta           = events.KindDelta
	KindQuestion        = events.KindQuestion
	KindReasoning       = events.KindReasoning
	KindStatus          = events.KindStatus
	KindTaskEnd         = events.KindTaskEnd
	KindTaskStart       = events.KindTaskStart
	KindToolEnd         = events.KindToolEnd
	KindToolStart       = events.KindToolStart
	KindWait            = events.KindWait
)

var (
	TailEvents = events.Tail
)
