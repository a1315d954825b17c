package events

// Kinds of events. Data is text for the streamed kinds and small JSON (or
// nothing) for the others.
const (
	KindDelta     = "delta"      // a piece of the reply text
	KindReasoning = "reasoning"  // a piece of the model's reasoning text
	KindToolStart = "tool_start" // a tool call begins
	KindToolEnd   = "tool_end"   // a tool call ended
	KindStatus    = "status"     // a change of the turn's state
	KindWait      = "wait"       // the turn waits: a retry's delay, a slow model (text)
	KindDone      = "done"       // the turn ended; the last event of a turn
)

// streamed reports whether events of kind carry pieces of one text, which
// may be merged when the buffer is full.
func streamed(kind string) bool { return kind == KindDelta || kind == KindReasoning }
