package workflows

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Register registers every workflow under its stable name.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(TurnWorkflow, workflow.RegisterOptions{Name: TurnWorkflowName})
	r.RegisterWorkflowWithOptions(SessionWorkflow, workflow.RegisterOptions{Name: SessionWorkflowName})
	r.RegisterWorkflowWithOptions(MemoryReviewWorkflow, workflow.RegisterOptions{Name: MemoryReviewWorkflowName})
	r.RegisterWorkflowWithOptions(CronRunWorkflow, workflow.RegisterOptions{Name: CronRunWorkflowName})
	r.RegisterWorkflowWithOptions(CompactSessionWorkflow, workflow.RegisterOptions{Name: CompactSessionWorkflowName})
	r.RegisterWorkflowWithOptions(GoalWorkflow, workflow.RegisterOptions{Name: GoalWorkflowName})
	r.RegisterWorkflowWithOptions(SummaryWorkflow, workflow.RegisterOptions{Name: SummaryWorkflowName})
	r.RegisterWorkflowWithOptions(MemorySyncWorkflow, workflow.RegisterOptions{Name: MemorySyncWorkflowName})
}
