// Package activities holds the side-effecting steps of a turn: persisting the
// user's message, calling the model, executing tools and recording the end of
// the turn.
//
// Every activity takes references (session id, turn id, message ids) and
// returns small results: the conversation itself lives in the store, never in
// workflow history. Each write carries an idempotency key derived from the turn
// and the model-call number, so a retried activity never duplicates a message.
// Names, inputs and results are package turnapi's, shared with the workflows.
package activities
