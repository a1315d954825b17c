package acpdoor

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestGuardDropsOversizeLines: a line the SDK's reader could not take is
// answered and dropped; the lines around it, the last one without its
// newline too, go through whole.
func TestGuardDropsOversizeLines(t *testing.T) {
	t.Parallel()
	ok := `{"jsonrpc":"2.0","id":1,"method":"initialize"}`
	huge := `{"jsonrpc":"2.0","id":2,"method":"x","params":"` + strings.Repeat("a", maxLine) + `"}`
	in := strings.NewReader(ok + "\n" + huge + "\n" + "{bad\n" + ok)
	pr, pw := io.Pipe()
	var out bytes.Buffer
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(pr)
		done <- b
	}()
	guard(in, pw, &lockedWriter{w: &out})
	passed := <-done
	if want := ok + "\n" + ok + "\n"; string(passed) != want {
		t.Fatalf("passed on %d bytes, want the two small lines", len(passed))
	}
	if got := out.String(); !strings.Contains(got, "longer than 10 MiB") || !strings.Contains(got, "-32700") {
		t.Fatalf("replies: %s", got)
	}
}
