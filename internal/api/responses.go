package api

import (
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// responsesRequest is the part of an OpenAI Responses request the API
// reads: input as text or as messages, and the response it follows.
type responsesRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       string          `json:"instructions"`
	PreviousResponseID string          `json:"previous_response_id"`
	Stream             bool            `json:"stream"`
}

// handleResponses answers POST /v1/responses: the input, after the
// instructions and the request's system messages, is a turn of the
// session previous_response_id names (a new one otherwise, which begins
// with the input's earlier messages); the answer's id chains the next
// request onto the same session. With an Idempotency-Key, a retry
// answers from the same turn.
func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) error {
	var req responsesRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.Stream {
		return badParam("stream", "stream_unsupported", "/v1/responses does not stream here: use /v1/chat/completions with stream, or /v1/runs and its events")
	}
	asked, err := readResponses(req.Input, req.Instructions)
	if err != nil {
		return err
	}
	model, err := s.modelFor(req.Model)
	if err != nil {
		return err
	}
	session := ""
	if req.PreviousResponseID != "" {
		turnID, prev, ok := parseRunID(responsePrefix, req.PreviousResponseID)
		if !ok {
			return notFound("previous_response_id %q is no response of this API", oneLine(req.PreviousResponseID))
		}
		// A response is a turn that was: one made up names none (and would
		// start a session of its own).
		switch t, err := s.rt.Store.Turn(r.Context(), turnID); {
		case errors.Is(err, models.ErrNotFound) || err == nil && t.SessionID != prev:
			return notFound("previous_response_id %q is no response of this API", oneLine(req.PreviousResponseID))
		case err != nil:
			return err
		}
		session = prev
	} else if session, err = sessionHeader(r); err != nil {
		return err
	}
	k, err := s.keyedOf(r, keyedResponses, session)
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
	res, err := s.waitResult(r.Context(), turnID)
	if err != nil {
		return err
	}
	end := endingOf(res)
	if end.err != nil {
		return end.err
	}
	shown := cmp.Or(req.Model, DefaultModelID)
	id := runID(responsePrefix, turnID)
	status := "completed"
	var incomplete any
	if end.finish == finishLength {
		status, incomplete = "incomplete", map[string]string{"reason": "max_output_tokens"}
	}
	final := deref(res.FinalResponse)
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": "response", "created_at": time.Now().Unix(), "status": status, "model": shown,
		"incomplete_details": incomplete, "previous_response_id": nilIfEmpty(req.PreviousResponseID),
		"output": []any{map[string]any{
			"type": "message", "id": "msg_" + strings.TrimPrefix(id, responsePrefix), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": final, "annotations": []any{}}},
		}},
		"output_text": final,
		"usage": map[string]int64{"input_tokens": res.Usage.PromptTokens, "output_tokens": res.Usage.CompletionTokens,
			"total_tokens": res.Usage.TotalTokens},
		"metadata": map[string]string{"session_id": session, "run_id": runID(runPrefix, turnID)},
	})
	return nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
