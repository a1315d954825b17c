package activities

// Stable activity names, registered by the worker and scheduled by workflows.
const (
	BeginTurnName     = "BeginTurn"
	CallModelName     = "CallModel"
	ExecuteToolsName  = "ExecuteTools"
	FinishTurnName    = "FinishTurn"
	ReserveTurnName   = "ReserveTurn"
	SaveGrantName     = "SaveGrant"
	PrepareReviewName = "PrepareReview"
	// CompressContextName compacts a session's context into a child session.
	CompressContextName = "CompressContext"
)
