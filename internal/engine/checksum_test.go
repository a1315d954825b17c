package engine

import (
	"strings"
	"testing"
)

// The checksum comes from the build information, so it is the same on
// every call of one binary and never needs the executable read.
func TestBinaryChecksum(t *testing.T) {
	t.Parallel()
	a, b := binaryChecksum(), binaryChecksum()
	if a != b {
		t.Fatalf("binaryChecksum differs between calls: %q, %q", a, b)
	}
	if !strings.HasPrefix(a, "talaria-") || len(a) != len("talaria-")+32 {
		t.Fatalf("binaryChecksum = %q, want talaria- and 32 hex digits", a)
	}
}
