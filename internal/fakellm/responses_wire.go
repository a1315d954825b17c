package fakellm

// This file holds the JSON shapes the Responses API format writes: the
// response object, its output items and usage, as the openai-go SDK
// parses them.

import (
	"encoding/json"
	"strings"
)

// rsSummaryText is one part of a reasoning summary.
type rsSummaryText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// rsReasoningItem is a reasoning output item.
type rsReasoningItem struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Summary          []rsSummaryText `json:"summary"`
	EncryptedContent *string         `json:"encrypted_content,omitempty"`
}

// at is the item as announced (pending: no summary yet) or finished.
func (r rsReasoningItem) at(pending bool) rsReasoningItem {
	if pending {
		r.Summary = []rsSummaryText{}
	}
	return r
}

// rsOutputText is an output_text content part.
type rsOutputText struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
}

// rsMessageItem is an assistant message output item.
type rsMessageItem struct {
	ID      string         `json:"id"`
	Type    string         `json:"type"`
	Status  string         `json:"status"`
	Role    string         `json:"role"`
	Content []rsOutputText `json:"content"`
}

// at is the item as announced (pending: in progress, no content) or
// finished.
func (m rsMessageItem) at(pending bool) rsMessageItem {
	if pending {
		m.Status, m.Content = "in_progress", []rsOutputText{}
	}
	return m
}

// rsFunctionCallItem is a function call output item.
type rsFunctionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

// at is the item as announced (pending: in progress, no arguments yet)
// or finished.
func (c rsFunctionCallItem) at(pending bool) rsFunctionCallItem {
	if pending {
		c.Status, c.Arguments = "in_progress", ""
	}
	return c
}

// rsIncomplete says why a response is incomplete.
type rsIncomplete struct {
	Reason string `json:"reason"`
}

// rsInputDetails and rsOutputDetails break token counts down.
type rsInputDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type rsOutputDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// rsUsage is a response's token usage; input tokens include the cached.
type rsUsage struct {
	InputTokens         int             `json:"input_tokens"`
	InputTokensDetails  rsInputDetails  `json:"input_tokens_details"`
	OutputTokens        int             `json:"output_tokens"`
	OutputTokensDetails rsOutputDetails `json:"output_tokens_details"`
	TotalTokens         int             `json:"total_tokens"`
}

// rsTextConfig is the text format of a response.
type rsTextConfig struct {
	Format struct {
		Type string `json:"type"`
	} `json:"format"`
}

// rsResponse is the response object.
type rsResponse struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Background         bool              `json:"background"`
	Error              *struct{}         `json:"error"`
	IncompleteDetails  *rsIncomplete     `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []any             `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Reasoning          rsReasoning       `json:"reasoning"`
	Store              bool              `json:"store"`
	Temperature        float32           `json:"temperature"`
	Text               rsTextConfig      `json:"text"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Tools              json.RawMessage   `json:"tools"`
	TopP               float32           `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *rsUsage          `json:"usage"`
	User               *string           `json:"user"`
	Metadata           map[string]string `json:"metadata"`
}

// responseObject is the response object of a plan with its output and
// status; final: with its usage (and, when incomplete, the reason), as
// the JSON answer and the last event carry it.
func responseObject(p plan, output []any, status string, final bool) rsResponse {
	n, _ := p.native.(*rsNative)
	if n == nil {
		n = &rsNative{}
	}
	req := n.req
	r := rsResponse{
		ID:                "resp_fake_" + strings.TrimPrefix(p.id, "chatcmpl-fake-"),
		Object:            "response",
		CreatedAt:         p.created,
		Status:            status,
		Instructions:      req.Instructions,
		MaxOutputTokens:   req.MaxOutputTokens,
		Model:             p.model,
		Output:            output,
		ParallelToolCalls: req.ParallelToolCalls == nil || *req.ParallelToolCalls,
		Store:             req.Store == nil || *req.Store,
		Temperature:       1,
		TopP:              1,
		Truncation:        "disabled",
		ToolChoice:        json.RawMessage(`"auto"`),
		Tools:             json.RawMessage(`[]`),
		Metadata:          map[string]string{},
	}
	if output == nil {
		r.Output = []any{}
	}
	if req.Reasoning != nil {
		r.Reasoning = *req.Reasoning
	}
	if req.Temperature != nil {
		r.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		r.TopP = *req.TopP
	}
	if len(req.ToolChoice) > 0 {
		r.ToolChoice = req.ToolChoice
	}
	if len(req.Tools) > 0 && string(req.Tools) != "null" {
		r.Tools = req.Tools
	}
	r.Text.Format.Type = "text"
	if !final {
		return r
	}
	if status == "incomplete" {
		reason := "max_output_tokens"
		if p.finish == "content_filter" {
			reason = "content_filter"
		}
		r.IncompleteDetails = &rsIncomplete{Reason: reason}
	}
	u := responsesUsage(p)
	r.Usage = &u
	return r
}

// responsesUsage is a plan's usage in the Responses API's words.
func responsesUsage(p plan) rsUsage {
	u := rsUsage{
		InputTokens:  p.usage.PromptTokens,
		OutputTokens: p.usage.CompletionTokens,
		TotalTokens:  p.usage.TotalTokens,
	}
	if d := p.usage.PromptTokensDetails; d != nil {
		u.InputTokensDetails.CachedTokens = d.CachedTokens
	}
	if d := p.usage.CompletionTokensDetails; d != nil {
		u.OutputTokensDetails.ReasoningTokens = d.ReasoningTokens
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return u
}
