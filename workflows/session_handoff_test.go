package workflows

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidateMessage(t *testing.T) {
	tests := []struct {
		name string
		m    Message
		want string // "" valid; else a part of the error
	}{
		{"queue", Message{RequestID: "r1", Text: "hi", Mode: BusyQueue}, ""},
		{"default mode", Message{RequestID: "r1", Text: "hi"}, ""},
		{"steer", Message{RequestID: "r1", Mode: BusySteer}, ""},
		{"no request id", Message{Text: "hi", Mode: BusyQueue}, "request id"},
		{"blank request id", Message{RequestID: "  ", Mode: BusyQueue}, "request id"},
		{"huge request id", Message{RequestID: strings.Repeat("x", maxRequestID+1)}, "at most"},
		{"longest request id", Message{RequestID: strings.Repeat("x", maxRequestID)}, ""},
		{"unknown mode", Message{RequestID: "r1", Mode: "shout"}, "busy-input mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateMessage(tt.m)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("ValidateMessage = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("ValidateMessage = %v, want an error about %q", err, tt.want)
			}
		})
	}
	if err := ValidateMessage(Message{}); !errors.Is(err, ErrNoRequestID) {
		t.Errorf("ValidateMessage(empty) = %v, want ErrNoRequestID", err)
	}
}

func TestContinueDue(t *testing.T) {
	tests := []struct {
		suggested     bool
		events, limit int
		want          bool
	}{
		{false, 10, 2000, false},
		{false, 1999, 2000, false},
		{false, 2000, 2000, true},
		{false, 5000, 2000, true},
		{true, 10, 2000, true},
	}
	for _, tt := range tests {
		if got := continueDue(tt.suggested, tt.events, tt.limit); got != tt.want {
			t.Errorf("continueDue(%v, %d, %d) = %v, want %v", tt.suggested, tt.events, tt.limit, got, tt.want)
		}
	}
}

func TestRunLimit(t *testing.T) {
	if got := runLimit(SessionInput{}); got != DefaultMaxRunEvents {
		t.Errorf("runLimit(default) = %d, want %d", got, DefaultMaxRunEvents)
	}
	if got := runLimit(SessionInput{MaxRunEvents: 300}); got != 300 {
		t.Errorf("runLimit(300) = %d", got)
	}
}

func TestQueueIndex(t *testing.T) {
	q := []Message{{RequestID: "a"}, {RequestID: "b"}, {RequestID: "c"}}
	for req, want := range map[string]int{"a": 0, "c": 2, "z": -1, "": -1} {
		if got := queueIndex(q, req); got != want {
			t.Errorf("queueIndex(%q) = %d, want %d", req, got, want)
		}
	}
}

// TestClaimsBoundedAndSettled: a claim lasts until its sender is answered;
// claims of senders that never come back are dropped oldest first past
// maxClaims.
func TestClaimsBoundedAndSettled(t *testing.T) {
	s := &session{owed: map[string]bool{}, claims: map[string]string{}, assigned: map[string]string{}, assignedAt: map[string]time.Time{}}
	s.owed["r0"] = true
	s.claim("r0", "turn/x/1")
	if s.owed["r0"] || s.claims["r0"] != "turn/x/1" {
		t.Fatalf("claim: owed %v, claims %v", s.owed, s.claims)
	}
	s.settle("r0", "turn/x/1", time.Unix(100, 0))
	if len(s.claims) != 0 || len(s.claimOrder) != 0 {
		t.Fatalf("settle left %v %v", s.claims, s.claimOrder)
	}
	if s.assigned["r0"] != "turn/x/1" {
		t.Fatal("a settled request is not among the recent ones (a sender whose answer was lost asks again)")
	}
	for i := range maxClaims + 5 {
		s.claim(string(rune('a'+i%26))+strings.Repeat("-", i/26), "t")
	}
	if len(s.claims) != maxClaims || len(s.claimOrder) != maxClaims {
		t.Fatalf("%d claims (%d in order), want %d", len(s.claims), len(s.claimOrder), maxClaims)
	}
	if _, ok := s.claims["a"]; ok {
		t.Error("the oldest claim was kept past the bound")
	}
}

func TestRecentAssignments(t *testing.T) {
	now := time.Unix(10_000, 0)
	assigned := map[string]string{"old": "turn/s/1", "edge": "turn/s/2", "new": "turn/s/3"}
	at := map[string]time.Time{"old": now.Add(-time.Hour), "edge": now.Add(-assignedKeep), "new": now.Add(-time.Second)}
	got := recentAssignments(assigned, at, now)
	if len(got) != 1 || got[0] != (Assignment{RequestID: "new", TurnID: "turn/s/3", At: at["new"]}) {
		t.Fatalf("recentAssignments = %+v, want only the entry younger than %v", got, assignedKeep)
	}
}
