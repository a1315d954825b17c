package workflows

import "fmt"

// Stable names shared by workers and clients.
const (
	// TaskQueue is the task queue turn workflows and their activities run on.
	TaskQueue = "talaria-turns"
	// TurnWorkflowName is the registered name of TurnWorkflow.
	TurnWorkflowName = "TurnWorkflow"
)

// TurnWorkflowID is the workflow id of turn number n of a session. Being
// derived from both, a retried start can never run the same turn twice.
func TurnWorkflowID(sessionID string, n int) string {
	return fmt.Sprintf("turn/%s/%d", sessionID, n)
}
