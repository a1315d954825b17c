package events

import (
	"testing"
	"unicode/utf8"

	"github.com/talaria-agent/talaria/models"
)

// TestKindsAreDistinctAndStorable: every kind, those the workflows record
// included, is a distinct name the store accepts; only delta and reasoning
// are streamed (merged when the buffer is full).
func TestKindsAreDistinctAndStorable(t *testing.T) {
	kinds := []string{KindDelta, KindReasoning, KindToolStart, KindToolEnd, KindStatus, KindWait, KindDone,
		KindApproval, KindApprovalDecided, KindQuestion, KindAnswered}
	seen := map[string]bool{}
	for _, k := range kinds {
		if k == "" || utf8.RuneCountInString(k) > models.MaxEventKindLen || seen[k] {
			t.Errorf("kind %q: empty, too long or repeated", k)
		}
		seen[k] = true
		if streamed(k) != (k == KindDelta || k == KindReasoning) {
			t.Errorf("streamed(%q) = %v", k, streamed(k))
		}
	}
	if KindApproval != "approval" || KindApprovalDecided != "approval_decided" || KindQuestion != "question" || KindAnswered != "answered" {
		t.Errorf("human-wait kinds %q %q %q %q", KindApproval, KindApprovalDecided, KindQuestion, KindAnswered)
	}
}
