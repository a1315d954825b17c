package turnapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEventPayloadsJSON: the payloads of the live events of a wait on a
// person have the JSON names clients read.
func TestEventPayloadsJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v    any
		want string
	}{
		{ApprovalEvent{CallID: "c", Command: "rm -rf x", Rule: "r", Reason: "why", Pattern: "rm -rf x"},
			`{"call_id":"c","command":"rm -rf x","rule":"r","reason":"why","pattern":"rm -rf x"}`},
		{ApprovalEvent{CallID: "c"}, `{"call_id":"c","command":"","rule":"","reason":""}`},
		{ApprovalDecidedEvent{CallID: "c", Choice: DecidedTimeout}, `{"call_id":"c","choice":"timeout"}`},
		{QuestionEvent{CallID: "q", Question: "?", Choices: []string{"a", "b"}}, `{"call_id":"q","question":"?","choices":["a","b"]}`},
		{QuestionEvent{CallID: "q", Question: "?"}, `{"call_id":"q","question":"?"}`},
		{AnsweredEvent{CallID: "q"}, `{"call_id":"q","answered":false}`},
	}
	for _, c := range cases {
		data, err := json.Marshal(c.v)
		if err != nil || string(data) != c.want {
			t.Errorf("json of %+v = %s, %v; want %s", c.v, data, err, c.want)
		}
	}
}

// TestBoundedEventsFit: whatever the texts, a bounded payload encodes
// within MaxEventDataBytes; small texts are kept as they are, and the
// input's choices are not modified.
func TestBoundedEventsFit(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("<é>\n", 50_000)
	many := make([]string, 100)
	for i := range many {
		many[i] = huge
	}
	for _, v := range []any{
		ApprovalEvent{CallID: "call_1", Command: huge, Rule: huge, Reason: huge, Pattern: huge}.Bounded(),
		QuestionEvent{CallID: "call_1", Question: huge, Choices: many}.Bounded(),
	} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if n := JSONLen(string(data)); n > MaxEventDataBytes {
			t.Errorf("%T encodes as %d bytes in a RecordEventInput, above %d", v, n, MaxEventDataBytes)
		}
	}
	small := QuestionEvent{CallID: "q", Question: "Which?", Choices: []string{"a", "b"}}
	if got := small.Bounded(); got.Question != "Which?" || len(got.Choices) != 2 || got.Choices[1] != "b" {
		t.Errorf("Bounded changed a small question: %+v", got)
	}
	q := QuestionEvent{Choices: []string{huge}}
	_ = q.Bounded()
	if q.Choices[0] != huge {
		t.Error("Bounded modified its receiver's choices")
	}
	if a := (ApprovalEvent{CallID: "c", Command: "ls"}).Bounded(); a != (ApprovalEvent{CallID: "c", Command: "ls"}) {
		t.Errorf("Bounded changed a small approval: %+v", a)
	}
}
