package fakellm

// This file streams a Responses API answer: named events whose data
// carry their type and sequence number, from response.created to
// response.completed or response.incomplete.

import (
	"encoding/json"
	"fmt"
)

// rsEvent is the data of one streamed event; the fields an event type
// does not have are left out.
type rsEvent struct {
	Type           string      `json:"type"`
	SequenceNumber int         `json:"sequence_number"`
	Response       *rsResponse `json:"response,omitempty"`
	OutputIndex    *int        `json:"output_index,omitempty"`
	ItemID         string      `json:"item_id,omitempty"`
	ContentIndex   *int        `json:"content_index,omitempty"`
	SummaryIndex   *int        `json:"summary_index,omitempty"`
	Item           any         `json:"item,omitempty"`
	Part           any         `json:"part,omitempty"`
	Delta          *string     `json:"delta,omitempty"`
	Text           *string     `json:"text,omitempty"`
	Arguments      *string     `json:"arguments,omitempty"`
	Name           string      `json:"name,omitempty"`
	Logprobs       *[]any      `json:"logprobs,omitempty"`
}

// rsEvents collects the events of one stream.
type rsEvents struct {
	events []sseEvent
	seq    int
	err    error
}

// add encodes ev as the next event, of the given kind.
func (e *rsEvents) add(kind chunkKind, ev rsEvent) {
	if e.err != nil {
		return
	}
	ev.SequenceNumber = e.seq
	e.seq++
	b, err := json.Marshal(ev)
	if err != nil {
		e.err = fmt.Errorf("encoding event %s: %w", ev.Type, err)
		return
	}
	e.events = append(e.events, sseEvent{kind: kind, name: ev.Type, data: b})
}

// events is the streamed answer of a plan. The deltas of text, reasoning
// and arguments are its content chunks (the ones Break, End and
// StallAfterChunks count); the events that announce and finish items
// count as lead chunks; the final event is the tail.
func (f *responsesFormat) events(p plan) ([]sseEvent, error) {
	out := f.output(p)
	var e rsEvents
	start := responseObject(p, nil, "in_progress", false)
	e.add(chunkLead, rsEvent{Type: "response.created", Response: &start})
	e.add(chunkLead, rsEvent{Type: "response.in_progress", Response: &start})
	index := 0
	if rs := out.reasoning; rs != nil {
		e.reasoningEvents(index, *rs, p.step.ChunkSize)
		index++
	}
	if m := out.message; m != nil {
		e.messageEvents(index, *m, p.step.ChunkSize)
		index++
	}
	for _, c := range out.calls {
		e.callEvents(index, c, p.step.ChunkSize)
		index++
	}
	final := responseObject(p, out.items(false), out.status, true)
	last := "response.completed"
	if out.status == "incomplete" {
		last = "response.incomplete"
	}
	e.add(chunkTail, rsEvent{Type: last, Response: &final})
	return e.events, e.err
}

// reasoningEvents streams a reasoning item and its summary.
func (e *rsEvents) reasoningEvents(index int, rs rsReasoningItem, chunkSize int) {
	e.add(chunkLead, rsEvent{Type: "response.output_item.added", OutputIndex: &index, Item: rs.at(true)})
	for i, s := range rs.Summary {
		si := i
		empty := rsSummaryText{Type: "summary_text"}
		e.add(chunkLead, rsEvent{Type: "response.reasoning_summary_part.added", ItemID: rs.ID,
			OutputIndex: &index, SummaryIndex: &si, Part: empty})
		for _, piece := range splitText(s.Text, chunkSize) {
			d := piece
			e.add(chunkContent, rsEvent{Type: "response.reasoning_summary_text.delta", ItemID: rs.ID,
				OutputIndex: &index, SummaryIndex: &si, Delta: &d})
		}
		text := s.Text
		e.add(chunkLead, rsEvent{Type: "response.reasoning_summary_text.done", ItemID: rs.ID,
			OutputIndex: &index, SummaryIndex: &si, Text: &text})
		e.add(chunkLead, rsEvent{Type: "response.reasoning_summary_part.done", ItemID: rs.ID,
			OutputIndex: &index, SummaryIndex: &si, Part: s})
	}
	e.add(chunkLead, rsEvent{Type: "response.output_item.done", OutputIndex: &index, Item: rs})
}

// messageEvents streams an assistant message and its text.
func (e *rsEvents) messageEvents(index int, m rsMessageItem, chunkSize int) {
	e.add(chunkLead, rsEvent{Type: "response.output_item.added", OutputIndex: &index, Item: m.at(true)})
	for i, part := range m.Content {
		ci := i
		empty := rsOutputText{Type: "output_text", Annotations: []any{}, Logprobs: []any{}}
		e.add(chunkLead, rsEvent{Type: "response.content_part.added", ItemID: m.ID, OutputIndex: &index,
			ContentIndex: &ci, Part: empty})
		for _, piece := range splitText(part.Text, chunkSize) {
			d := piece
			e.add(chunkContent, rsEvent{Type: "response.output_text.delta", ItemID: m.ID, OutputIndex: &index,
				ContentIndex: &ci, Delta: &d, Logprobs: &[]any{}})
		}
		text := part.Text
		e.add(chunkLead, rsEvent{Type: "response.output_text.done", ItemID: m.ID, OutputIndex: &index,
			ContentIndex: &ci, Text: &text, Logprobs: &[]any{}})
		e.add(chunkLead, rsEvent{Type: "response.content_part.done", ItemID: m.ID, OutputIndex: &index,
			ContentIndex: &ci, Part: part})
	}
	e.add(chunkLead, rsEvent{Type: "response.output_item.done", OutputIndex: &index, Item: m})
}

// callEvents streams a function call and its arguments.
func (e *rsEvents) callEvents(index int, c rsFunctionCallItem, chunkSize int) {
	e.add(chunkLead, rsEvent{Type: "response.output_item.added", OutputIndex: &index, Item: c.at(true)})
	for _, piece := range splitArguments(c.Arguments, chunkSize) {
		d := piece
		e.add(chunkContent, rsEvent{Type: "response.function_call_arguments.delta", ItemID: c.ID,
			OutputIndex: &index, Delta: &d})
	}
	args := c.Arguments
	e.add(chunkLead, rsEvent{Type: "response.function_call_arguments.done", ItemID: c.ID, OutputIndex: &index,
		Arguments: &args, Name: c.Name})
	e.add(chunkLead, rsEvent{Type: "response.output_item.done", OutputIndex: &index, Item: c})
}
