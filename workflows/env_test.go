package workflows

import (
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
)

// newTestEnv is a test workflow environment for a busy machine: a
// workflow task that waits for a CPU is slow, not deadlocked, so the
// deadlock detector (1 s of real time by default) allows a minute.
func newTestEnv() *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	return env
}
