package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// ToolEvent is the SSE event name of tool progress in a streamed chat
// completion; OpenAI clients skip events with a name they do not know.
const ToolEvent = "talaria.tool"

// Finish reasons of a completion whose turn ended other than completed.
// A turn interrupted, failed, or incomplete without any text is an error
// (turnError) instead.
const (
	finishStop   = "stop"
	finishLength = "length"
)

// ending is how an ended turn is answered to an OpenAI client: a finish
// reason with the final text, or an error.
type ending struct {
	finish string
	err    *apiError
}

// endingOf maps a turn's result to its answer. Pure.
func endingOf(res workflows.ConversationResult) ending {
	hasText := res.FinalResponse != nil && *res.FinalResponse != ""
	reason := res.TurnExitReason
	switch {
	case res.Completed:
		return ending{finish: finishStop}
	case res.Interrupted:
		return ending{err: errorf(http.StatusConflict, typeTurn, string(reason), "the turn was interrupted before it finished (stop reason %s)", reason)}
	case res.Failed:
		msg := "the turn failed"
		if res.Error != nil && *res.Error != "" {
			msg += ": " + oneLine(*res.Error)
		}
		return ending{err: errorf(http.StatusBadGateway, typeTurn, string(reason), "%s", msg)}
	case !hasText:
		return ending{err: errorf(http.StatusBadGateway, typeTurn, string(reason), "the turn ended without an answer (stop reason %s)", reason)}
	}
	switch reason {
	case workflows.StopMaxIterations, workflows.StopBudgetExhausted, workflows.StopTruncated, workflows.StopThinkingExhausted:
		return ending{finish: finishLength}
	}
	return ending{finish: finishStop}
}

// chatRequest is the part of an OpenAI chat completion request the API
// reads; go-openai's message type decodes content given as a string or
// as parts.
type chatRequest struct {
	Model         string                         `json:"model"`
	Messages      []openai.ChatCompletionMessage `json:"messages"`
	Stream        bool                           `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// maxSeedMessages bounds the earlier messages a request may carry into a
// new session.
const maxSeedMessages = 1000

// seedSession stores a new session's earlier messages before its first
// turn, in order (the keys keep one request's messages once if the store
// is asked again).
func (s *Server) seedSession(ctx context.Context, session, model string, msgs []models.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	if len(msgs) > maxSeedMessages {
		return badRequest("too_many_messages", "the conversation holds more than %d messages: continue a session with X-Talaria-Session-Id instead", maxSeedMessages)
	}
	size := 0
	for _, m := range msgs {
		size += len(m.Content)
	}
	if size > MaxBodyBytes {
		return errorf(http.StatusRequestEntityTooLarge, typeInvalidRequest, "input_too_large", "the conversation is longer than %d bytes", MaxBodyBytes)
	}
	if _, err := s.rt.Store.EnsureSession(ctx, session, model); err != nil {
		return fmt.Errorf("seed session %s: %w", session, err)
	}
	for i := range msgs {
		msgs[i].SessionID, msgs[i].IdemKey = session, fmt.Sprintf("%s%d", seedPrefix(session), i)
	}
	if _, err := s.rt.Store.AppendMessages(ctx, msgs); err != nil {
		return fmt.Errorf("seed session %s: %w", session, err)
	}
	return nil
}

// seedPrefix begins the keys of a session's seeded messages. Pure.
func seedPrefix(session string) string { return "seed/" + session + "/" }

// completion is a chat.completion answer.
type completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   *usage             `json:"usage,omitempty"`
}

type completionChoice struct {
	Index        int          `json:"index"`
	Message      *chatMessage `json:"message,omitempty"`
	Delta        *chatMessage `json:"delta,omitempty"`
	FinishReason *string      `json:"finish_reason"`
	Logprobs     *struct{}    `json:"logprobs"`
}

// toolChunk is a talaria.tool event: an empty chunk carrying the tool
// event in its talaria field.
type toolChunk struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Talaria toolProgress       `json:"talaria"`
}

// toolProgress is a tool_start or tool_end event.
type toolProgress struct {
	Kind string `json:"kind"`
	Tool any    `json:"tool"`
}

type chatMessage struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

func usageOf(res workflows.ConversationResult) *usage {
	return &usage{PromptTokens: res.Usage.PromptTokens, CompletionTokens: res.Usage.CompletionTokens, TotalTokens: res.Usage.TotalTokens}
}

// handleChat answers POST /v1/chat/completions: the last user message,
// after the request's system messages, is a turn of the session the
// header names (a new one otherwise), with its pictures. With an Idempotency-Key, a retry
// answers from the same turn.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) error {
	var req chatRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	asked, err := readChat(req.Messages)
	if err != nil {
		return err
	}
	model, err := s.modelFor(req.Model)
	if err != nil {
		return err
	}
	session, err := sessionHeader(r)
	if err != nil {
		return err
	}
	k, err := s.keyedOf(r, keyedChat, session)
	if err != nil {
		return err
	}
	images, err := s.takePictures(r.Context(), &asked, session == "")
	if err != nil {
		return err
	}
	treq := turnRequest{session: session, input: asked.input(), images: images, model: model, approvals: workflows.ApprovalDeny, mode: s.ownTurnMode()}
	turnID, session, err := s.startOwnTurn(r.Context(), k, treq, asked.prior)
	if err != nil {
		return err
	}
	w.Header().Set("X-Talaria-Session-Id", session)
	w.Header().Set("X-Talaria-Run-Id", runID(runPrefix, turnID))
	stopOnDisconnect := truthy(r.Header.Get("X-Talaria-Stop-On-Disconnect"))
	shownModel := cmp.Or(req.Model, DefaultModelID)
	id := "chatcmpl-" + runID(runPrefix, turnID)
	if req.Stream {
		withUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
		return s.streamChat(w, r, turnID, id, shownModel, withUsage, stopOnDisconnect)
	}
	res, err := s.waitResult(r.Context(), turnID)
	if err != nil {
		s.stopIfGone(r.Context(), turnID, stopOnDisconnect && r.Context().Err() != nil)
		return err
	}
	end := endingOf(res)
	if end.err != nil {
		return end.err
	}
	content := ""
	if res.FinalResponse != nil {
		content = *res.FinalResponse
	}
	writeJSON(w, http.StatusOK, completion{
		ID: id, Object: "chat.completion", Created: time.Now().Unix(), Model: shownModel,
		Choices: []completionChoice{{Message: &chatMessage{Role: "assistant", Content: &content}, FinishReason: &end.finish}},
		Usage:   usageOf(res),
	})
	return nil
}

// stopIfGone interrupts the request's own turn when its client went away
// (stop: the client asked for that with X-Talaria-Stop-On-Disconnect and
// is gone); otherwise the turn goes on.
func (s *Server) stopIfGone(ctx context.Context, turnID string, stop bool) {
	if !stop {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.rt.Signal(sctx, turnID, workflows.SignalInterrupt, "the API client disconnected"); err != nil {
		s.logger.Warn("api: stop a turn whose client went away", "turn", turnID, "error", err)
	}
}

// streamChat answers a streamed completion: chat.completion.chunk deltas
// of the reply, talaria.tool events, a last chunk with the finish reason
// (and usage when asked), then [DONE]. A turn that ends without an answer
// sends an error event in the OpenAI shape before [DONE].
func (s *Server) streamChat(w http.ResponseWriter, r *http.Request, turnID, id, model string, withUsage, stopOnDisconnect bool) error {
	sse, err := newSSE(w)
	if err != nil {
		return err
	}
	created := time.Now().Unix()
	chunk := func(delta *chatMessage, finish *string) completion {
		return completion{ID: id, Object: "chat.completion.chunk", Created: created, Model: model,
			Choices: []completionChoice{{Delta: delta, FinishReason: finish}}}
	}
	role := "assistant"
	empty := ""
	if err := sse.data(chunk(&chatMessage{Role: role, Content: &empty}, nil)); err != nil {
		return nil
	}
	// shown follows what the client was sent of each model call's text: a
	// retried call's attempt retraces it, and only what goes beyond it is
	// sent. segment is the text sent since the last tool call: the final
	// answer's beginning, if the answer came from it.
	var shown events.Shown
	var segment strings.Builder
	streamedAny, differed := false, false
	err = s.followEvents(r.Context(), turnID, 0, sse, func(ev eventOut) error {
		switch ev.Kind {
		case events.KindAttempt:
			if shown.Attempt(string(ev.raw)) {
				segment.Reset()
			}
		case events.KindDelta:
			t, restarted := shown.Delta(ev.text)
			if restarted {
				differed = true
				return errRetriedDifferently
			}
			if t == "" {
				return nil
			}
			segment.WriteString(t)
			streamedAny = true
			return sse.data(chunk(&chatMessage{Content: &t}, nil))
		case events.KindToolStart, events.KindToolEnd:
			segment.Reset()
			// A chunk without choices (as a usage chunk is), so that a
			// client reading every event as a chunk skips it too.
			return sse.event(ToolEvent, "", toolChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: model,
				Choices: []completionChoice{}, Talaria: toolProgress{Kind: ev.Kind, Tool: ev.payload()}})
		}
		return nil
	})
	if differed {
		// What was sent cannot be taken back: the stream ends with an
		// error naming where the whole answer is, and the turn goes on.
		_ = sse.data(errorBody{Error: errorf(http.StatusConflict, typeTurn, "retried_differently",
			"a retried model call answered differently from the text already sent; the turn goes on, and GET /v1/runs/%s has its answer", runID(runPrefix, turnID))})
		_ = sse.done()
		return nil
	}
	if err != nil {
		// The client went away (or a write to it failed): the turn goes
		// on, unless the client asked otherwise.
		s.stopIfGone(r.Context(), turnID, stopOnDisconnect)
		return nil
	}
	res, err := s.waitResult(r.Context(), turnID)
	if err != nil {
		s.stopIfGone(r.Context(), turnID, stopOnDisconnect && r.Context().Err() != nil)
		var e *apiError
		if !errors.As(err, &e) {
			e = errorf(http.StatusBadGateway, typeTurn, "failed", "the turn ended without a result")
		}
		_ = sse.data(errorBody{Error: e})
		_ = sse.done()
		return nil
	}
	end := endingOf(res)
	if end.err != nil {
		_ = sse.data(errorBody{Error: end.err})
		_ = sse.done()
		return nil
	}
	// A reply that was not streamed (streaming off) is sent whole; one the
	// last deltas began is completed with what they did not carry.
	final := deref(res.FinalResponse)
	rest := ""
	switch {
	case !streamedAny:
		rest = final
	case strings.HasPrefix(final, segment.String()):
		rest = final[segment.Len():]
	}
	if rest != "" {
		_ = sse.data(chunk(&chatMessage{Content: &rest}, nil))
	}
	_ = sse.data(chunk(&chatMessage{}, &end.finish))
	if withUsage {
		c := completion{ID: id, Object: "chat.completion.chunk", Created: created, Model: model, Choices: []completionChoice{}, Usage: usageOf(res)}
		_ = sse.data(c)
	}
	_ = sse.done()
	return nil
}

// errRetriedDifferently stops a stream whose retried model call answered
// differently from the text already sent.
var errRetriedDifferently = errors.New("a retried model call answered differently")

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// truthy reads a header flag: 1, true, yes, on.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// handleModels answers GET /v1/models.
func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) error {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list"}
	for _, id := range s.modelIDs() {
		list.Data = append(list.Data, model{ID: id, Object: "model", OwnedBy: "talaria"})
	}
	return writeJSON(w, http.StatusOK, list)
}

// handleCapabilities answers GET /v1/capabilities: what this API offers.
func (s *Server) handleCapabilities(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "capabilities",
		"chat_completions": map[string]any{
			"streaming": true, "tool_progress_event": ToolEvent,
			"session_header": "X-Talaria-Session-Id", "stop_on_disconnect_header": "X-Talaria-Stop-On-Disconnect",
			"approvals": "deny", "idempotency_header": IdempotencyHeader,
			"system_messages": "instructions", "content_parts": []string{"text", "image_url"},
		},
		"responses": map[string]any{"streaming": false, "previous_response_id": true, "idempotency_header": IdempotencyHeader,
			"content_parts": []string{"input_text", "output_text", "input_image"}},
		"runs": map[string]any{"events": "sse", "resume": "Last-Event-ID", "controls": []string{"stop", "steer", "approval", "answer"},
			"idempotency_header": IdempotencyHeader},
		"sessions": true, "jobs": true,
		"models": s.modelIDs(),
	})
	return nil
}
