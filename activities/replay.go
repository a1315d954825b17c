package activities

import (
	"encoding/json"

	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/models"
)

// replayText is a reply's provider state as stored with it ("" for none).
// Pure.
func replayText(r *llm.Replay) string {
	if r == nil || len(r.Data) == 0 {
		return ""
	}
	b, err := json.Marshal(r)
	if err != nil {
		return ""
	}
	return string(b)
}

// replays is the provider state of the stored replies that have some, by
// llm.ReplayKey (the reply's first tool call id); nil when none has.
// State that does not parse is left out: the provider then sends the
// reply without it, as one written by another wire format. Pure.
func replays(history []models.Message) map[string]llm.Replay {
	var out map[string]llm.Replay
	for _, m := range history {
		if m.Replay == "" || len(m.ToolCalls) == 0 {
			continue
		}
		var r llm.Replay
		if err := json.Unmarshal([]byte(m.Replay), &r); err != nil || r.Wire == "" {
			continue
		}
		if out == nil {
			out = map[string]llm.Replay{}
		}
		out[m.ToolCalls[0].ID] = r
	}
	return out
}
