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
	guard(in, pw, &lockedWriter{w: &out}, nil)
	passed := <-done
	if want := ok + "\n" + ok + "\n"; string(passed) != want {
		t.Fatalf("passed on %d bytes, want the two small lines", len(passed))
	}
	if got := out.String(); !strings.Contains(got, `{"jsonrpc":"2.0","id":2,"error":{"code":-32600`) || !strings.Contains(got, "longer than 10 MiB") || !strings.Contains(got, "-32700") {
		t.Fatalf("replies: %s", got)
	}
}

// TestHeadID: the id of a message cut off after its first bytes, when
// it came before the cut.
func TestHeadID(t *testing.T) {
	t.Parallel()
	for head, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"prompt":[{"type":"image","data":"iVBOR`: "7",
		`{"jsonrpc":"2.0","id":"p-1","method":"x","params":{"x":"aaaa`:                                        `"p-1"`,
		`{"jsonrpc":"2.0","method":"x","id":3,"params":{"x":"aaaa`:                                            "3",
		`{"jsonrpc":"2.0","id":"p-1","params":{"x":"aaaa`:                                                     "",
		`{"jsonrpc":"2.0","id":3,"result":{"text":"aaaa`:                                                      "",
		`{"jsonrpc":"2.0","id":3,"id":4,"method":"x","params":"aaaa`:                                          "3",
		`{"jsonrpc":"2.0","id":1e400,"method":"x","params":"aaaa`:                                             "",
		`{"jsonrpc":"2.0","method":"session/prompt","params":{"prompt":"aaaa`:                                 "",
		`{"jsonrpc":"2.0","id":{"no":1},"params":"aaaa`:                                                       "",
		`{"jsonrpc":"2.0","id":null,"params":"aaaa`:                                                           "",
		`[1,2,`:    "",
		`not json`: "",
	} {
		if got := string(headID([]byte(head))); got != want {
			t.Errorf("headID(%.40q) = %q, want %q", head, got, want)
		}
	}
}

// TestAfterResponse: what waits for a new session's response runs once,
// after that response is written, and not for other messages.
func TestAfterResponse(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := &lockedWriter{w: &out}
	var ran []string
	w.afterResponse("s1", func() { ran = append(ran, out.String()) })
	for _, line := range []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s2"}}`,
		`{"jsonrpc":"2.0","id":4,"result":{"sessionId":"s1"}}`,
		`{"jsonrpc":"2.0","id":5,"result":{"sessionId":"s1"}}`,
	} {
		if _, err := w.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	if len(ran) != 1 || !strings.HasSuffix(ran[0], `"id":4,"result":{"sessionId":"s1"}}`+"\n") {
		t.Fatalf("ran %d times, seeing %q", len(ran), ran)
	}
}

func TestResponseSession(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"abc"}}`:                                "abc",
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"abc"}}`:             "",
		`{"jsonrpc":"2.0","id":1,"method":"x","result":{"sessionId":"abc"}}`:                   "",
		`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`:                          "",
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"sessionId":"abc"}}}`: "",
		`{"sessionId"`: "",
	}
	for line, want := range tests {
		if got := responseSession([]byte(line)); got != want {
			t.Errorf("responseSession(%s) = %q, want %q", line, got, want)
		}
	}
}
