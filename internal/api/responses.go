package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

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

// responsesInputText is the text of the last user input: the input
// itself when it is a string, else the last user message's text (a
// string or input_text parts). Pure.
func responsesInputText(raw json.RawMessage) (string, error) {
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return text, nil
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return "", badRequest("invalid_input", "input must be a string or a list of messages")
	}
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		if it.Role != "user" || (it.Type != "" && it.Type != "message") {
			continue
		}
		if err := json.Unmarshal(it.Content, &text); err == nil {
			return text, nil
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(it.Content, &parts); err != nil {
			return "", badRequest("invalid_input", "a message's content must be a string or a list of parts")
		}
		var texts []string
		for _, p := range parts {
			if p.Type == "input_text" || p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "\n"), nil
	}
	return "", badRequest("no_user_message", "input holds no user message")
}

// handleResponses answers POST /v1/responses: the input is a turn of the
// session previous_response_id names (a new one otherwise); the answer's
// id chains the next request onto the same session.
func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) error {
	var req responsesRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.Stream {
		return badRequest("stream_unsupported", "/v1/responses does not stream here: use /v1/chat/completions with stream, or /v1/runs and its events")
	}
	if len(req.Input) == 0 {
		return badRequest("no_user_message", "input is missing")
	}
	text, err := responsesInputText(req.Input)
	if err != nil {
		return err
	}
	model, err := s.modelFor(req.Model)
	if err != nil {
		return err
	}
	session := ""
	if req.PreviousResponseID != "" {
		_, prev, ok := parseRunID(responsePrefix, req.PreviousResponseID)
		if !ok {
			return notFound("previous_response_id %q is no response of this API", oneLine(req.PreviousResponseID))
		}
		session = prev
	} else if session, err = sessionHeader(r); err != nil {
		return err
	}
	if session == "" {
		session = newSessionID()
	}
	turnID, err := s.startTurn(r.Context(), turnRequest{session: session, input: text, model: model, approvals: workflows.ApprovalDeny,
		mode: s.ownTurnMode()})
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
	shown := req.Model
	if shown == "" {
		shown = DefaultModelID
	}
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
