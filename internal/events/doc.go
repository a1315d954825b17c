// Package events carries a turn's live progress (streamed reply text,
// reasoning, tools starting and finishing, status changes) from the worker
// running the turn to the clients following it, outside Temporal workflow
// history: history would otherwise grow with every token.
//
// The worker side is a Publisher per turn. Publish never waits for the
// database: events are buffered and written in batches (every FlushEvery,
// or as soon as MaxBatch events are pending) through a Sink, normally
// *models.Store. When the buffer is full because the database is slow,
// consecutive pieces of streamed text are merged into one event instead of
// being dropped; no other event is ever dropped. Failed writes are logged
// and never fail the turn. The waits of a turn on a person (an approval, a
// clarify question) are the exception: the turn's workflow records their
// events itself, one at a time, through the RecordEvent activity (see
// KindApproval and the kinds after it).
//
// The client side is Tail, which reads a Source (again normally
// *models.Store) for the events of a turn after the last ID it has seen,
// and ends with the turn's "done" event. It reads when the Source says the
// turn's events came (a Watcher, as models.Store is: one watcher per
// process, fed by the writer in-process, by LISTEN/NOTIFY on PostgreSQL and
// by one scan per process on SQLite), and polls only a Source that cannot.
// Because the events live in the store, the client may run in another
// process or on another machine than the worker, on SQLite or PostgreSQL
// alike.
package events
