package gateway

import (
	"regexp"
	"testing"
	"time"
)

func TestPairingCodes(t *testing.T) {
	shape := regexp.MustCompile(`^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$`)
	seen := map[string]bool{}
	for range 100 {
		c := NewPairingCode()
		if !shape.MatchString(c) || seen[c] {
			t.Fatalf("code %q: bad shape or repeated", c)
		}
		seen[c] = true
	}
	for in, want := range map[string]string{"abcd-efgh": "ABCD-EFGH", " ABCD EFGH ": "ABCD-EFGH", "ABCDEFGH": "ABCD-EFGH", "ABC": "", "": "", "ABCD-EFGH-1": ""} {
		if got := normalizeCode(in); got != want {
			t.Errorf("normalizeCode(%q) = %q, want %q", in, got, want)
		}
	}
	var p pairAttempts
	now := time.Unix(0, 0)
	for i := range 5 {
		if !p.allow("x", now.Add(time.Duration(i)*time.Minute)) {
			t.Fatalf("attempt %d refused", i+1)
		}
	}
	if p.allow("x", now.Add(10*time.Minute)) || !p.allow("y", now) || !p.allow("x", now.Add(61*time.Minute)) {
		t.Error("attempts are not 5 an hour per user")
	}
}
