package activities

import (
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/models"
)

func TestTurnMessageAt(t *testing.T) {
	t.Parallel()
	msg := func(turn, role string, steer bool) models.Message {
		return models.Message{TurnID: turn, Role: role, Steer: steer}
	}
	for _, c := range []struct {
		name    string
		history []models.Message
		want    int
	}{
		{"none", nil, 0},
		{"first of the turn", []models.Message{msg("t1", "user", false), msg("t1", "assistant", false), msg("t2", "user", false), msg("t2", "assistant", false)}, 2},
		{"a steer is not the turn's message", []models.Message{msg("t2", "user", true), msg("t2", "user", false)}, 1},
		{"no message of the turn", []models.Message{msg("t1", "user", false)}, 1},
	} {
		if got := turnMessageAt(c.history, "t2"); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func TestSummaryTranscript(t *testing.T) {
	t.Parallel()
	msgs := []models.Message{
		{Role: "system", Content: "sys"}, {Role: "user", Content: "old question"},
		{Role: "tool", Content: "output"}, {Role: "assistant", Content: "answer"}, {Role: "user", Content: "new"},
	}
	if got, want := summaryTranscript(msgs, 1000), "Conversation:\nuser: old question\nassistant: answer\nuser: new\n"; got != want {
		t.Errorf("transcript %q, want %q", got, want)
	}
	if got := summaryTranscript(msgs, 30); got != "Conversation:\nassistant: answer\nuser: new\n" {
		t.Errorf("bounded transcript keeps the most recent: %q", got)
	}
	if got := summaryTranscript(msgs[:1], 1000); got != "" {
		t.Errorf("no conversation: %q", got)
	}
	if got := boundSummary("<think>hmm</think>\n  Topic: x.  "); got != "Topic: x." {
		t.Errorf("boundSummary = %q", got)
	}
	if got := boundSummary(strings.Repeat("y", 5000)); len(got) > summaryMaxBytes+len("…") {
		t.Errorf("summary of %d bytes", len(got))
	}
}
