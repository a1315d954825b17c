package acpdoor

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/talaria-agent/talaria/config"
)

// TestCancelOnItsWayIn: a cancel the guard sees after a prompt it passed
// on, before that prompt began, cancels that prompt and no later one; a
// prompt the SDK would refuse (no content) or a cancel before any prompt
// cancels nothing.
func TestCancelOnItsWayIn(t *testing.T) {
	t.Parallel()
	prompt := func(id string) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}}`, id)
	}
	cancel := func(id string) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, id)
	}
	malformed := []byte(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s"}}`)
	tests := []struct {
		name  string
		lines [][]byte
		// begins lists whether each prompt, begun in order after the
		// lines, starts cancelled.
		begins []bool
	}{
		{"a prompt overtaken by its cancel", [][]byte{prompt("s"), cancel("s")}, []bool{true}},
		{"a cancel before the prompt", [][]byte{cancel("s"), prompt("s")}, []bool{false}},
		{"only the prompts before the cancel", [][]byte{prompt("s"), cancel("s"), prompt("s")}, []bool{true, false}},
		{"another session's cancel", [][]byte{prompt("s"), cancel("t")}, []bool{false}},
		{"a refused prompt counts for nothing", [][]byte{malformed, cancel("s"), prompt("s")}, []bool{false}},
		{"escaped method names count", [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"session\/prompt","params":{"sessionId":"s","prompt":[]}}`), cancel("s")}, []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := New(nil, config.Default(t.TempDir()), "test", func() string { return "x" }, slog.New(slog.DiscardHandler))
			a.base = context.Background()
			a.sessions["s"] = &session{}
			for _, l := range tt.lines {
				a.sawLine(l)
			}
			for i, want := range tt.begins {
				pr, err := a.claim("s")
				if err != nil {
					t.Fatal(err)
				}
				if pr.cancelled != want {
					t.Fatalf("prompt %d begins cancelled %v, want %v", i+1, pr.cancelled, want)
				}
				a.release("s", pr)
			}
			if len(a.prompts) != 0 {
				t.Fatalf("counts left: %+v", a.prompts["s"])
			}
		})
	}
}

// TestCancelInTheEditorsOrder: a cancel acts when the guard sees it, in
// the order the editor sent it, not when the SDK's notification goroutine
// gets to it: it cancels the prompt running then, and a stray cancel
// cancels nothing of the prompt sent after it, however late its handler
// runs.
func TestCancelInTheEditorsOrder(t *testing.T) {
	t.Parallel()
	a := New(nil, config.Default(t.TempDir()), "test", func() string { return "x" }, slog.New(slog.DiscardHandler))
	a.base = context.Background()
	a.sessions["s"] = &session{}
	prompt := []byte(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}`)
	cancel := []byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`)

	a.sawLine(prompt)
	running, err := a.claim("s")
	if err != nil {
		t.Fatal(err)
	}
	a.sawLine(cancel)
	if !a.isCancelled(running) {
		t.Fatal("the running prompt was not cancelled")
	}
	a.release("s", running)

	a.sawLine(cancel) // stray
	a.sawLine(prompt)
	next, err := a.claim("s")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Cancel(context.Background(), acp.CancelNotification{SessionId: "s"}); err != nil {
		t.Fatal(err)
	}
	if a.isCancelled(next) {
		t.Fatal("a cancel sent before the prompt cancelled it")
	}
	a.release("s", next)
}
