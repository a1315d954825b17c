package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// TestPlainError: Temporal's decorations are left out of what a person
// reads; the message itself is kept, on one line.
func TestPlainError(t *testing.T) {
	tests := []struct{ in, want string }{
		{"model call failed: HTTP 500 (type: server_error, retryable: true)", "model call failed: HTTP 500"},
		{"turn t-1: workflow execution error (type: TurnWorkflow, workflowID: s/turn-3, runID: 0195-ab): boom (type: Fatal, retryable: false)",
			"turn t-1: boom"},
		{"activity error (type: CallModel, scheduledEventID: 10, startedEventID: 11, identity: 1@host@): rate limited (type: rate_limit, retryable: true)",
			"rate limited"},
		{"plain message", "plain message"},
		{"two\nlines", "two; lines"},
		{"the word (type: is kept) when it is not Temporal's", "the word (type: is kept) when it is not Temporal's"},
	}
	for _, tt := range tests {
		if got := plainError(tt.in); got != tt.want {
			t.Errorf("plainError(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestErrorTurnID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"workflow execution error (type: TurnWorkflow, workflowID: s/turn-3, runID: 0195-ab): boom", "s/turn-3"},
		{"context canceled", ""},
	}
	for _, tt := range tests {
		if got := errorTurnID(tt.in); got != tt.want {
			t.Errorf("errorTurnID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRefusalLine: a command that was not run says why, from the refusal
// the model read.
func TestRefusalLine(t *testing.T) {
	blocked := turnapi.DenialMessage(turnapi.Assessment{Risk: turnapi.RiskBlocked, Reason: "deletes the root file system", Rule: "root_delete"}, false)
	denied := turnapi.DenialMessage(turnapi.Assessment{Reason: "recursive delete"}, true)
	unanswered := turnapi.DenialMessage(turnapi.Assessment{Reason: "recursive delete"}, false)
	tests := []struct{ refusal, want string }{
		{blocked, "terminal blocked: deletes the root file system"},
		{denied, "terminal denied: not run"},
		{unanswered, "terminal not run: no one approved it"},
		{"BLOCKED: something else entirely", "terminal blocked"},
		{"refused by policy. More text.", "terminal refused: refused by policy"},
		{"odd \x1b[2J text", `terminal refused: odd \x1b[2J text`},
	}
	for _, tt := range tests {
		if got := refusalLine("terminal", tt.refusal); got != tt.want {
			t.Errorf("refusalLine(%q) = %q, want %q", tt.refusal, got, tt.want)
		}
	}
}

// TestStreamPrinterRefused: a refused call's tool_end is a progress line
// saying why, not the bare "failed".
func TestStreamPrinterRefused(t *testing.T) {
	var out, errOut bytes.Buffer
	p := &streamPrinter{out: &out, errOut: &errOut}
	refusal := turnapi.DenialMessage(turnapi.Assessment{Reason: "recursive delete"}, true)
	data, _ := json.Marshal(activities.ToolEvent{ID: "c1", Name: "terminal", Failed: true, Refused: refusal})
	p.onEvent(models.Event{Kind: events.KindToolEnd, Data: string(data)})
	if errOut.String() != "  ✗ terminal denied: not run\n" || out.Len() != 0 {
		t.Fatalf("out %q, errOut %q", out.String(), errOut.String())
	}
}

// TestStreamPrinterHostileText: a tool name and arguments chosen by the
// model, and a notice carrying a provider's text, reach the terminal made
// visible: no escape sequence, no line break, each event one line.
func TestStreamPrinterHostileText(t *testing.T) {
	var out, errOut bytes.Buffer
	p := &streamPrinter{out: &out, errOut: &errOut}
	hostile := "\x1b]0;owned\x07\x1b[2J\r\nfake prompt $ "
	start, _ := json.Marshal(activities.ToolEvent{ID: "c1", Name: "terminal" + hostile, Args: `{"command":"` + hostile + `"}`})
	end, _ := json.Marshal(activities.ToolEvent{ID: "c1", Name: "terminal" + hostile, Failed: true})
	for _, ev := range []models.Event{
		{Kind: events.KindToolStart, Data: string(start)},
		{Kind: events.KindToolEnd, Data: string(end)},
		{Kind: events.KindWait, Data: "model call failed: " + hostile},
	} {
		p.onEvent(ev)
	}
	got := errOut.String()
	if strings.ContainsAny(got, "\x1b\x07\r") || strings.Count(got, "\n") != 3 || out.Len() != 0 {
		t.Fatalf("progress lines carry raw control characters or extra lines:\n%q", got)
	}
}

// TestPlainFlagError: a flag's bad value is said in a person's words.
func TestPlainFlagError(t *testing.T) {
	for in, want := range map[string]string{
		`invalid argument "abc" for "--max-cost" flag: strconv.ParseFloat: parsing "abc": invalid syntax`:                             `invalid argument "abc" for "--max-cost" flag: not a number`,
		`invalid argument "99999999999999999999" for "-n" flag: strconv.ParseInt: parsing "99999999999999999999": value out of range`: `invalid argument "99999999999999999999" for "-n" flag: out of range`,
		`invalid argument "x" for "--max-iterations" flag: strconv.ParseInt: parsing "x": invalid syntax`:                             `invalid argument "x" for "--max-iterations" flag: not a whole number`,
		`invalid argument "maybe" for "--json" flag: strconv.ParseBool: parsing "maybe": invalid syntax`:                              `invalid argument "maybe" for "--json" flag: not true or false`,
		`unknown flag: --nope`: `unknown flag: --nope`,
	} {
		if got := plainFlagError(in); got != want {
			t.Errorf("plainFlagError(%q) = %q, want %q", in, got, want)
		}
	}
}
