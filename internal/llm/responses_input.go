package llm

// This file converts a chat-completions-shaped Request into the body of a
// Responses API request: instructions, input items and function tools.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	openai "github.com/sashabaranov/go-openai"
)

// missingOutput is the output sent for a function call whose result the
// conversation does not hold (it was written by another wire format, or
// cut short): the Responses API refuses a call without an output.
const missingOutput = "error: no result was recorded for this tool call"

// responsesReasoning is one reasoning item as Replay.Data keeps it (a
// JSON array of them): what the Responses API needs back with store=false.
type responsesReasoning struct {
	ID               string   `json:"id"`
	EncryptedContent string   `json:"encrypted_content,omitempty"`
	Summary          []string `json:"summary,omitempty"`
}

// responsesParams is the Responses API request for in at e: stateless
// (store=false, with the encrypted reasoning asked for so that it travels
// in the requests), the model, limits, reasoning effort and tools.
func responsesParams(e Endpoint, in Request, omit responsesOmit) (responses.ResponseNewParams, error) {
	instructions, items, err := responsesInput(in)
	if err != nil {
		return responses.ResponseNewParams{}, err
	}
	tools, err := responsesTools(in.Tools)
	if err != nil {
		return responses.ResponseNewParams{}, err
	}
	p := responses.ResponseNewParams{
		Model: e.Model,
		Store: param.NewOpt(false),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: items},
		Tools: tools,
	}
	if !omit.include {
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	}
	if instructions != "" {
		p.Instructions = param.NewOpt(instructions)
	}
	if in.MaxTokens > 0 {
		p.MaxOutputTokens = param.NewOpt(int64(in.MaxTokens))
	}
	if effort := strings.ToLower(strings.TrimSpace(e.ReasoningEffort)); effort != "" {
		p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(effort)}
		if !omit.summary {
			p.Reasoning.Summary = shared.ReasoningSummaryAuto
		}
	}
	return p, nil
}

// inputBuilder accumulates the input items of one request and keeps the
// function calls consistent: every output answers a call that came before
// it, every call gets an output.
type inputBuilder struct {
	replay   map[string]Replay
	items    responses.ResponseInputParam
	called   map[string]bool // call ids of the function_call items so far
	answered map[string]bool // call ids that have an output
	pending  []string        // calls of the last assistant message
}

// responsesInput splits the messages of in into the instructions (the
// leading system messages) and the input items. A later system message
// keeps its place as a developer message.
func responsesInput(in Request) (string, responses.ResponseInputParam, error) {
	b := &inputBuilder{replay: in.Replay, called: map[string]bool{}, answered: map[string]bool{}}
	var instructions []string
	leading := true
	for i, m := range in.Messages {
		switch m.Role {
		case openai.ChatMessageRoleSystem, openai.ChatMessageRoleDeveloper:
			if leading {
				if t := messageText(m); t != "" {
					instructions = append(instructions, t)
				}
				continue
			}
			b.flush()
			b.items = append(b.items, responses.ResponseInputItemParamOfMessage(messageText(m),
				responses.EasyInputMessageRoleDeveloper))
		case openai.ChatMessageRoleUser:
			leading = false
			b.flush()
			b.items = append(b.items, userItem(m))
		case openai.ChatMessageRoleAssistant:
			leading = false
			b.flush()
			if err := b.assistant(m); err != nil {
				return "", nil, fmt.Errorf("message %d: %w", i, err)
			}
		case openai.ChatMessageRoleTool:
			leading = false
			b.toolResult(m)
		default:
			return "", nil, fmt.Errorf("message %d has role %q, which the Responses API does not know", i, m.Role)
		}
	}
	b.flush()
	return strings.Join(instructions, "\n\n"), b.items, nil
}

// assistant adds an assistant message: the reasoning items its reply came
// with (when they were written by this wire format), its text, its calls.
func (b *inputBuilder) assistant(m openai.ChatCompletionMessage) error {
	if rp, ok := b.replay[ReplayKey(m)]; ok && rp.Wire == WireResponses && len(m.ToolCalls) > 0 {
		var reasoning []responsesReasoning
		if err := json.Unmarshal(rp.Data, &reasoning); err != nil {
			return fmt.Errorf("reading the replayed reasoning of call %s: %w", ReplayKey(m), err)
		}
		for _, r := range reasoning {
			if r.EncryptedContent == "" {
				continue // without it a stateless request cannot name the item
			}
			b.items = append(b.items, reasoningItem(r))
		}
	}
	if text := messageText(m); text != "" {
		msg := responses.ResponseOutputMessageParam{
			Status: responses.ResponseOutputMessageStatusCompleted,
			Content: []responses.ResponseOutputMessageContentUnionParam{{
				OfOutputText: &responses.ResponseOutputTextParam{
					Text:        text,
					Annotations: []responses.ResponseOutputTextAnnotationUnionParam{},
				},
			}},
		}
		b.items = append(b.items, responses.ResponseInputItemUnionParam{OfOutputMessage: &msg})
	}
	for _, c := range m.ToolCalls {
		if c.ID == "" || b.called[c.ID] {
			continue // a call without an id cannot be answered; a repeated id is one call
		}
		args := c.Function.Arguments
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		b.items = append(b.items, responses.ResponseInputItemParamOfFunctionCall(args, c.ID, c.Function.Name))
		b.called[c.ID] = true
		b.pending = append(b.pending, c.ID)
	}
	return nil
}

// toolResult adds a tool message as a function_call_output, unless no
// call of the input asked for it (its call came in another wire format's
// shape and was dropped, or it answers a call already answered).
func (b *inputBuilder) toolResult(m openai.ChatCompletionMessage) {
	id := m.ToolCallID
	if id == "" || !b.called[id] || b.answered[id] {
		return
	}
	out := responses.ResponseInputItemParamOfFunctionCallOutput(messageText(m))
	out.OfFunctionCallOutput.CallID = param.NewOpt(id)
	b.items = append(b.items, out)
	b.answered[id] = true
}

// flush answers the calls of the last assistant message that got no
// output before the conversation moved on.
func (b *inputBuilder) flush() {
	for _, id := range b.pending {
		if b.answered[id] {
			continue
		}
		out := responses.ResponseInputItemParamOfFunctionCallOutput(missingOutput)
		out.OfFunctionCallOutput.CallID = param.NewOpt(id)
		b.items = append(b.items, out)
		b.answered[id] = true
	}
	b.pending = nil
}

// reasoningItem is a replayed reasoning item as an input item. Pure.
func reasoningItem(r responsesReasoning) responses.ResponseInputItemUnionParam {
	summary := make([]responses.ResponseReasoningItemSummaryParam, 0, len(r.Summary))
	for _, s := range r.Summary {
		summary = append(summary, responses.ResponseReasoningItemSummaryParam{Text: s})
	}
	item := responses.ResponseInputItemParamOfReasoning(r.ID, summary)
	if r.EncryptedContent != "" {
		item.OfReasoning.EncryptedContent = param.NewOpt(r.EncryptedContent)
	}
	return item
}

// userItem is a user message as an input message: its text, and the
// images of a multi-part message. Pure.
func userItem(m openai.ChatCompletionMessage) responses.ResponseInputItemUnionParam {
	var parts responses.ResponseInputMessageContentListParam
	if len(m.MultiContent) == 0 {
		parts = append(parts, responses.ResponseInputContentParamOfInputText(m.Content))
	}
	for _, p := range m.MultiContent {
		switch {
		case p.Type == openai.ChatMessagePartTypeImageURL && p.ImageURL != nil:
			detail := cmp.Or(responses.ResponseInputImageDetail(p.ImageURL.Detail), responses.ResponseInputImageDetailAuto)
			img := responses.ResponseInputContentParamOfInputImage(detail)
			img.OfInputImage.ImageURL = param.NewOpt(p.ImageURL.URL)
			parts = append(parts, img)
		case p.Text != "":
			parts = append(parts, responses.ResponseInputContentParamOfInputText(p.Text))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, responses.ResponseInputContentParamOfInputText(""))
	}
	return responses.ResponseInputItemParamOfMessage(parts, responses.EasyInputMessageRoleUser)
}

// messageText is the text of a message: its content, or its text parts
// joined by blank lines. Pure.
func messageText(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var texts []string
	for _, p := range m.MultiContent {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// responsesTools converts function tools; other tool types are skipped.
func responsesTools(tools []openai.Tool) ([]responses.ToolUnionParam, error) {
	return functionTools(tools, func(fn *openai.FunctionDefinition, schema map[string]any) responses.ToolUnionParam {
		ft := responses.FunctionToolParam{Name: fn.Name, Parameters: schema, Strict: param.NewOpt(false)}
		if fn.Description != "" {
			ft.Description = param.NewOpt(fn.Description)
		}
		return responses.ToolUnionParam{OfFunction: &ft}
	})
}

// toolSchema is a tool's parameters as a JSON object (an empty object
// schema when there are none). Pure.
func toolSchema(params any) (map[string]any, error) {
	empty := map[string]any{"type": "object", "properties": map[string]any{}}
	if params == nil {
		return empty, nil
	}
	data, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encoding its parameters: %w", err)
	}
	if s := strings.TrimSpace(string(data)); s == "null" || s == "" {
		return empty, nil
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		return nil, fmt.Errorf("its parameters are not a JSON object: %w", err)
	}
	return schema, nil
}
