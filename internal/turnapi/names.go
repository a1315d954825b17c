package turnapi

// Stable activity names, registered by the worker and scheduled by workflows.
const (
	BeginTurnName    = "BeginTurn"
	CallModelName    = "CallModel"
	ExecuteToolsName = "ExecuteTools"
	FinishTurnName   = "FinishTurn"
	ReserveTurnName  = "ReserveTurn"
	SaveGrantName    = "SaveGrant"
	// TurnPolicyName reports the serving worker's approval mode and the
	// stored grants to a continued run of a turn.
	TurnPolicyName    = "TurnPolicy"
	PrepareReviewName = "PrepareReview"
	// CompressContextName compacts a session's context into a child session.
	CompressContextName = "CompressContext"
)

// AnswerCallsName answers the calls of a tool batch that ended (interrupted
// or failed) without storing a result for each.
const AnswerCallsName = "AnswerCalls"

// Delivery of scheduled job results.
const (
	DeliverName       = "Deliver"
	PreRunScriptName  = "PreRunScript"
	FinishCronRunName = "FinishCronRun"
)

// RecordEventName appends one live event of a turn (RecordEventInput): the
// events a workflow records itself, such as a wait on a person beginning
// and ending (EventApproval, EventQuestion, ...).
const RecordEventName = "RecordEvent"
