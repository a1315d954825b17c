// Package turnapi is the vocabulary shared by the workflows and the
// activities of a turn: the activity names, their inputs and results, and
// the small types and pure functions both sides need — tool-call plans and
// references, token usage, the worker's model settings, model-call error
// classes, the approval vocabulary (risk assessments, grants, choices and
// the text of a refusal), the bounds on text that reaches workflow history,
// the messages a turn's result shows, the record of a scheduled run and the
// live events a workflow records itself (the waits on a person).
//
// It is the contract between deterministic workflow code and the code that
// does I/O, so it imports no store, no HTTP client and no process launcher:
// the workflows package depends on it instead of on the activities, and
// the activities, the store and the model client convert to and from its
// types. Payloads are JSON: a field's name and shape are part of the
// recorded workflow histories, so renaming or reshaping one needs a
// workflow version, a Go type's name does not.
package turnapi
