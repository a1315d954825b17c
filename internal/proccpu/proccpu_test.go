//go:build unix

package proccpu

import (
	"crypto/sha256"
	"testing"
)

// TestSecondsGrowsWithWork: hashing 200 MiB adds CPU time.
func TestSecondsGrowsWithWork(t *testing.T) {
	t.Parallel()
	before := Seconds()
	buf := make([]byte, 1<<20)
	for range 200 {
		sum := sha256.Sum256(buf)
		buf[0] = sum[0]
	}
	if after := Seconds(); after <= before {
		t.Fatalf("CPU time did not grow: %v then %v", before, after)
	}
}
