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

// TestStreamPrinterIgnoresHumanWaits: the events of a wait on a person
// print nothing (chat prompts for the approval or the answer from the
// progress query) and leave the reply's line as it was.
func TestStreamPrinterIgnoresHumanWaits(t *testing.T) {
	tests := []struct {
		kind, data string
	}{
		{events.KindApproval, `{"call_id":"c1","command":"rm -rf ./build","rule":"recursive_delete","reason":"recursive delete","pattern":"rm -rf ./build"}`},
		{events.KindApprovalDecided, `{"call_id":"c1","choice":"once"}`},
		{events.KindQuestion, `{"call_id":"q1","question":"Which colour?","choices":["red","blue"]}`},
		{events.KindAnswered, `{"call_id":"q1","answered":true}`},
		{events.KindAnswered, `not json`},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			var out, errOut bytes.Buffer
			p := &streamPrinter{out: &out, errOut: &errOut}
			p.onEvent(models.Event{Kind: events.KindDelta, Data: "partial"})
			p.onEvent(models.Event{Kind: tt.kind, Data: tt.data})
			if out.String() != "partial" || errOut.Len() != 0 || !p.midLine {
				t.Fatalf("out %q, errOut %q, midLine %v; want the reply's line untouched", out.String(), errOut.String(), p.midLine)
			}
		})
	}
}
