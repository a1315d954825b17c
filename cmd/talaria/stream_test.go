package main

import (
	"bytes"
	"testing"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/models"
)

// TestStreamPrinterStatus: a status event (e.g. a compaction) is a line on
// the progress stream, after the reply text's line is ended.
func TestStreamPrinterStatus(t *testing.T) {
	var out, errOut bytes.Buffer
	p := &streamPrinter{out: &out, errOut: &errOut}
	p.onEvent(models.Event{Kind: events.KindDelta, Data: "partial"})
	p.onEvent(models.Event{Kind: events.KindStatus, Data: "compacting the conversation"})
	if out.String() != "partial\n" || errOut.String() != "  ⋯ compacting the conversation\n" {
		t.Fatalf("out %q, errOut %q", out.String(), errOut.String())
	}
}
