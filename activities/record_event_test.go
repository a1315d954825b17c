package activities

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// TestRecordEvent: RecordEvent appends the event once however often it is
// run again (a retried attempt finds its own event last); the same event
// after another is appended; an event the store would refuse, or data
// above MaxEventDataBytes, fails without a retry.
func TestRecordEvent(t *testing.T) {
	ctx := context.Background()
	store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	a := &Activities{Store: store}
	const turn = "turn/s/1"
	asked := turnapi.RecordEventInput{TurnID: turn, Kind: events.KindApproval, Data: `{"call_id":"c1","command":"rm -rf x","rule":"r","reason":"why"}`}
	decided := turnapi.RecordEventInput{TurnID: turn, Kind: events.KindApprovalDecided, Data: `{"call_id":"c1","choice":"once"}`}
	for _, in := range []turnapi.RecordEventInput{asked, asked, decided, decided, asked} {
		if err := a.RecordEvent(ctx, in); err != nil {
			t.Fatalf("RecordEvent(%+v): %v", in, err)
		}
	}
	evs, err := store.EventsAfter(ctx, turn, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind)
	}
	if got, want := strings.Join(kinds, ","), "approval,approval_decided,approval"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if evs[0].Data != asked.Data || evs[1].Data != decided.Data {
		t.Fatalf("events %+v", evs)
	}

	for name, in := range map[string]turnapi.RecordEventInput{
		"no turn":   {Kind: events.KindApproval, Data: "{}"},
		"no kind":   {TurnID: turn, Data: "{}"},
		"long kind": {TurnID: turn, Kind: strings.Repeat("k", models.MaxEventKindLen+1)},
		"long data": {TurnID: turn, Kind: events.KindQuestion, Data: strings.Repeat("x", turnapi.MaxEventDataBytes+1)},
	} {
		err := a.RecordEvent(ctx, in)
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.Type() != InvalidEvent || !appErr.NonRetryable() {
			t.Errorf("%s: RecordEvent = %v, want a non-retryable %s", name, err, InvalidEvent)
		}
	}
}
