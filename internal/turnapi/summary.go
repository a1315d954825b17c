package turnapi

// SummarizeSessionName writes the summary of a session that ended, for
// recall across sessions (SummarizeSessionInput).
const SummarizeSessionName = "SummarizeSession"

// SummarizeSessionInput names the session to summarise. Text, when set,
// is the summary already written (a compaction's), stored as it is
// without a model call; Model names who wrote it.
type SummarizeSessionInput struct {
	SessionID string
	Reason    string `json:",omitempty"`
	Text      string `json:",omitempty"`
	Model     string `json:",omitempty"`
}

// SummarizeSessionResult says whether a summary was written (false: the
// session was summarised already, has no conversation, or is gone).
type SummarizeSessionResult struct {
	Written bool
}

// SyncMemoryName records a finished turn with the memory provider
// (memory.provider), after the turn's reply and off its path
// (SyncMemoryInput).
const SyncMemoryName = "SyncMemory"

// SyncMemoryInput names the finished turn to record: its session's
// conversation (SessionID) and the session its messages went to last
// (ActiveSessionID, another after a compaction; empty: SessionID). The
// turn's texts go from store to provider, never through workflow history.
type SyncMemoryInput struct {
	SessionID       string
	ActiveSessionID string `json:",omitempty"`
	TurnID          string
}
