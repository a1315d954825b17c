package fakellm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// chunkKind tells where a chunk stands in a stream.
type chunkKind int

const (
	chunkLead    chunkKind = iota // the role chunk
	chunkContent                  // reasoning, content and tool call pieces
	chunkTail                     // finish chunk, usage chunk, [DONE]
)

// sseEvent is one event of a stream: its "data:" line and, for the wire
// formats that name their events, its "event:" line; in an NDJSON stream
// (ndjsonStreamer) its data is one line as it is.
type sseEvent struct {
	kind chunkKind
	name string
	data []byte
}

// streamEvents builds the whole event sequence of a streamed answer.
func streamEvents(p plan) ([]sseEvent, error) {
	var events []sseEvent
	usageField := json.RawMessage(nil)
	if p.includeUsage {
		usageField = json.RawMessage("null")
	}
	add := func(kind chunkKind, choices []wireChunkChoice, usage json.RawMessage) error {
		b, err := json.Marshal(wireChunk{
			ID:      p.id,
			Object:  "chat.completion.chunk",
			Created: p.created,
			Model:   p.model,
			Choices: choices,
			Usage:   usage,
		})
		if err != nil {
			return fmt.Errorf("encoding chunk: %w", err)
		}
		events = append(events, sseEvent{kind: kind, data: b})
		return nil
	}
	delta := func(kind chunkKind, d wireDelta) error {
		return add(kind, []wireChunkChoice{{Index: 0, Delta: d}}, usageField)
	}

	empty := ""
	if err := delta(chunkLead, wireDelta{Role: "assistant", Content: &empty}); err != nil {
		return nil, err
	}
	for _, piece := range splitText(p.step.Reasoning, p.step.ChunkSize) {
		if err := delta(chunkContent, wireDelta{ReasoningContent: piece}); err != nil {
			return nil, err
		}
	}
	for _, piece := range splitText(p.step.Text, p.step.ChunkSize) {
		if err := delta(chunkContent, wireDelta{Content: &piece}); err != nil {
			return nil, err
		}
	}
	for i, c := range p.calls {
		index := i
		head := wireToolCall{
			Index:    &index,
			ID:       c.ID,
			Type:     "function",
			Function: wireFunction{Name: c.Name, Arguments: &empty},
		}
		if err := delta(chunkContent, wireDelta{ToolCalls: []wireToolCall{head}}); err != nil {
			return nil, err
		}
		for _, piece := range splitArguments(c.Arguments, p.step.ChunkSize) {
			part := wireToolCall{Index: &index, Function: wireFunction{Arguments: &piece}}
			if err := delta(chunkContent, wireDelta{ToolCalls: []wireToolCall{part}}); err != nil {
				return nil, err
			}
		}
	}
	finish := p.finish
	if err := add(chunkTail, []wireChunkChoice{{Index: 0, FinishReason: &finish}}, usageField); err != nil {
		return nil, err
	}
	if p.includeUsage {
		u, err := json.Marshal(p.usage)
		if err != nil {
			return nil, fmt.Errorf("encoding usage: %w", err)
		}
		if err := add(chunkTail, []wireChunkChoice{}, u); err != nil {
			return nil, err
		}
	}
	events = append(events, sseEvent{kind: chunkTail, data: []byte("[DONE]")})
	return events, nil
}

// ndjsonStreamer is a format whose streams are NDJSON (one JSON object a
// line, no SSE framing), as Ollama's native API streams.
type ndjsonStreamer interface {
	ndjson()
}

// streamsNDJSON reports whether f streams NDJSON rather than SSE.
func streamsNDJSON(f format) bool {
	_, ok := f.(ndjsonStreamer)
	return ok
}

// frame is the bytes of one event on the wire: SSE "event:" and "data:"
// lines, or (ndjson) the data as one line. Pure.
func frame(ev sseEvent, ndjson bool) []byte {
	if ndjson {
		return append(append([]byte(nil), ev.data...), '\n')
	}
	var b []byte
	if ev.name != "" {
		b = fmt.Appendf(b, "event: %s\n", ev.name)
	}
	return fmt.Appendf(b, "data: %s\n\n", ev.data)
}

// writeStream writes a streamed answer as Server-Sent Events or, ndjson,
// as NDJSON lines. It reports whether the client went away before the
// stream was complete and whether the stream was deliberately broken.
func (s *Server) writeStream(ctx context.Context, w http.ResponseWriter, p plan, events []sseEvent, ndjson bool) (cancelled, broken bool) {
	rc := http.NewResponseController(w)
	h := w.Header()
	if ndjson {
		h.Set("Content-Type", "application/x-ndjson")
	} else {
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(p.status)
	if err := rc.Flush(); err != nil {
		return true, false
	}

	st := p.step
	sent := 0 // content chunks written
	for i, ev := range events {
		// A limit is reached after that many content chunks, or at the
		// first tail chunk when there are fewer.
		atLimit := func(limit int) bool {
			return limit > 0 && ev.kind != chunkLead && (sent >= limit || ev.kind == chunkTail)
		}
		if atLimit(st.BreakAfterChunks) {
			breakConnection(w)
			return false, true
		}
		if atLimit(st.EndAfterChunks) {
			return false, true
		}
		if atLimit(st.StallAfterChunks) {
			return abandon(s.waitGone(ctx), w), false
		}
		if i > 0 && st.ChunkDelay > 0 {
			if why := s.sleep(ctx, st.ChunkDelay); why != wakeTimer {
				return abandon(why, w), false
			}
		}
		if ctx.Err() != nil {
			return true, false
		}
		if _, err := w.Write(frame(ev, ndjson)); err != nil {
			return true, false
		}
		if err := rc.Flush(); err != nil {
			return true, false
		}
		if ev.kind == chunkContent {
			sent++
		}
	}
	return false, false
}
