package workflows

import (
	"testing"
)

func TestIterationBudget(t *testing.T) {
	b := NewIterationBudget(2)
	steps := []struct {
		op        string
		wantOK    bool
		remaining int
	}{
		{"consume", true, 1},
		{"consume", true, 0},
		{"consume", false, 0},
		{"refund", true, 1},
		{"consume", true, 0},
		{"consume", false, 0},
	}
	for i, s := range steps {
		ok := true
		if s.op == "consume" {
			ok = b.Consume()
		} else {
			b.Refund()
		}
		if ok != s.wantOK || b.Remaining() != s.remaining {
			t.Fatalf("step %d %s: ok=%v remaining=%d, want ok=%v remaining=%d", i, s.op, ok, b.Remaining(), s.wantOK, s.remaining)
		}
	}
	zero := NewIterationBudget(0)
	if zero.Consume() {
		t.Fatal("a zero budget must not allow a call")
	}
}

func TestOutcomeOf(t *testing.T) {
	tests := []struct {
		reason   StopReason
		hasFinal bool
		want     Outcome
		status   string
	}{
		{StopTextResponse, true, Outcome{Completed: true}, "completed"},
		{StopMaxIterations, true, Outcome{Partial: true}, "incomplete"},
		{StopBudgetExhausted, false, Outcome{Partial: true}, "incomplete"},
		{StopInterrupted, false, Outcome{Interrupted: true}, "interrupted"},
		{StopInterrupted, true, Outcome{Interrupted: true, Partial: true}, "interrupted"},
		{StopError, false, Outcome{Failed: true}, "failed"},
		{StopInvalidTool, false, Outcome{Partial: true}, "incomplete"},
		{StopTruncated, true, Outcome{Partial: true}, "incomplete"},
		{StopEmptyResponseExhausted, false, Outcome{Partial: true}, "incomplete"},
		{StopGuardrailHalt, false, Outcome{Partial: true}, "incomplete"},
		{StopThinkingExhausted, false, Outcome{Partial: true}, "incomplete"},
	}
	for _, tt := range tests {
		if got := OutcomeOf(tt.reason, tt.hasFinal); got != tt.want {
			t.Errorf("OutcomeOf(%s, %v) = %+v, want %+v", tt.reason, tt.hasFinal, got, tt.want)
		}
		if got := tt.reason.Status(); got != tt.status {
			t.Errorf("%s.Status() = %q, want %q", tt.reason, got, tt.status)
		}
	}
}
