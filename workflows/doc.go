// Package workflows holds the TurnWorkflow, which runs one conversation turn
// durably, and the pure decision functions it is made of.
//
// A turn loops model call → tool execution → model call ... until the model
// answers in text or the iteration budget runs out; each step is an activity
// (see package activities) that works on messages stored in the database, so
// the workflow history only carries small references and grows by a constant
// amount per iteration. The workflow reads top to bottom in turn.go; every
// decision it takes is a small pure function in its own file with a table test.
//
// The package does no I/O and depends on none of the code that does: it
// schedules activities by name with the inputs and results of package
// turnapi, never importing the activities, the store, the model client, an
// HTTP client or a process launcher (deps_test.go checks it with go list).
package workflows
