package gateway_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/faketelegram"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// TestFilesOfStrangersAndOversized: a stranger's file is never downloaded
// (one refusal, no model call); an allowed user's file over its kind's
// limit is not taken: the sender is told why, and the model reads that a
// file was sent and left out, next to the file that was taken.
func TestFilesOfStrangersAndOversized(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	model := readingModel()
	defer model.Close()
	tg := faketelegram.Start("1:tok", "talaria_bot")
	defer tg.Close()
	limits := attach.Limits{Image: 1 << 20, Audio: 1 << 20, Document: 16}
	runGateway(t, ctx, model, tg, func(o *gateway.Options) { o.Limits = &limits })

	tg.SendFile(99, faketelegram.DocumentFile, "secrets.txt", "text/plain", []byte("from a stranger"), "")
	if _, err := tg.WaitSent(ctx, func(m []faketelegram.Message) bool { return len(m) == 1 }); err != nil {
		t.Fatal("no refusal for the stranger")
	}
	if n := tg.Downloads(); n != 0 {
		t.Fatalf("a stranger's file was downloaded %d times", n)
	}

	tg.SendFile(5, faketelegram.DocumentFile, "big.txt", "text/plain", bytes.Repeat([]byte("x"), 100), "see attached")
	sent, err := tg.WaitSent(ctx, func(ms []faketelegram.Message) bool {
		told, answered := false, false
		for _, m := range ms {
			told = told || strings.Contains(m.Text, "Could not take big.txt") && strings.Contains(m.Text, "too large")
			answered = answered || strings.Contains(m.Text, "read:")
		}
		return told && answered
	})
	if err != nil {
		t.Fatalf("sent: %+v", sent)
	}
	reqs := model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1 (the allowed user's)", len(reqs))
	}
	last, _ := reqs[0].LastMessage()
	if !strings.Contains(last.Content, "see attached") || !strings.Contains(last.Content, "[a file was sent but not taken: big.txt; it is too large") {
		t.Fatalf("the model read %q", last.Content)
	}
}
