//lint:file-ignore SA1019 max_tokens is the field OpenAI-compatible servers (and these wire formats) read; go-openai deprecates it only for OpenAI's o1 models

package fakellm

// This file reads a Responses API request: its JSON shape, its reading in
// chat-completions form (Request.Body), and the checks the real API makes
// of the items of its input.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// rsRequest is the part of a Responses API request body the fake reads.
type rsRequest struct {
	Model             string          `json:"model"`
	Instructions      *string         `json:"instructions"`
	Input             json.RawMessage `json:"input"`
	Stream            bool            `json:"stream"`
	Store             *bool           `json:"store"`
	Include           []string        `json:"include"`
	MaxOutputTokens   *int            `json:"max_output_tokens"`
	Reasoning         *rsReasoning    `json:"reasoning"`
	Temperature       *float32        `json:"temperature"`
	TopP              *float32        `json:"top_p"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
	ToolChoice        json.RawMessage `json:"tool_choice"`
	Tools             json.RawMessage `json:"tools"`
}

// rsReasoning is the reasoning configuration of a request and a response.
type rsReasoning struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

// rsTool is one tool of a request; the fake reads function tools.
type rsTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

// rsItem is one input item: a message, a reasoning item, a function call
// or a function call's output.
type rsItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        string          `json:"arguments"`
	Output           json.RawMessage `json:"output"`
	Summary          []rsSummaryText `json:"summary"`
	EncryptedContent *string         `json:"encrypted_content"`
}

// rsPart is one content part of an input message or a call output.
type rsPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Refusal  string `json:"refusal"`
	ImageURL string `json:"image_url"`
	Detail   string `json:"detail"`
}

// rsNative is what the answer needs from the request (decoded.native).
type rsNative struct {
	req rsRequest
	// encrypted: the request asked for reasoning.encrypted_content.
	encrypted bool
}

// errRequest is a request the real API refuses; its text is the API's.
type errRequest struct{ msg string }

func (e errRequest) Error() string { return e.msg }

// refuse is a refusal of the request with the API's message.
func refuse(format string, args ...any) error { return errRequest{msg: fmt.Sprintf(format, args...)} }

// decode reads a Responses API request and checks it as the real API
// does: a model, calls and outputs that match, and the reasoning items
// the fake issued carried back with the calls they came with.
func (f *responsesFormat) decode(raw []byte) (decoded, error) {
	var req rsRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return decoded{}, fmt.Errorf("reading the JSON body: %w", err)
	}
	if strings.TrimSpace(req.Model) == "" {
		return decoded{}, refuse("Missing required parameter: 'model'.")
	}
	items, err := inputItems(req.Input)
	if err != nil {
		return decoded{}, err
	}
	tools, err := chatTools(req.Tools)
	if err != nil {
		return decoded{}, err
	}
	msgs, err := f.chatMessages(req, items)
	if err != nil {
		return decoded{}, err
	}
	chat := openai.ChatCompletionRequest{Model: req.Model, Messages: msgs, Tools: tools, Stream: req.Stream}
	if req.MaxOutputTokens != nil {
		chat.MaxTokens = *req.MaxOutputTokens
	}
	if req.Reasoning != nil && req.Reasoning.Effort != nil {
		chat.ReasoningEffort = *req.Reasoning.Effort
	}
	if req.Temperature != nil {
		chat.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		chat.TopP = *req.TopP
	}
	chat.ParallelToolCalls = req.ParallelToolCalls
	n := &rsNative{req: req}
	for _, inc := range req.Include {
		n.encrypted = n.encrypted || inc == "reasoning.encrypted_content"
	}
	if n.encrypted && !reasoningModel(req.Model) {
		// As the real API answers for gpt-4o, gpt-4.1 and the like.
		return decoded{}, refuse("Encrypted content is not supported with this model.")
	}
	return decoded{chat: chat, stream: req.Stream, includeUsage: true, native: n}, nil
}

// reasoningModel reports whether a model reasons, as far as the fake is
// concerned: every model but the GPT-4 family (gpt-4o, gpt-4.1, ...),
// which the real API refuses encrypted reasoning for. Pure.
func reasoningModel(model string) bool {
	return !strings.HasPrefix(strings.ToLower(model), "gpt-4")
}

// inputItems reads the input: a string is one user message.
func inputItems(raw json.RawMessage) ([]rsItem, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		content, _ := json.Marshal(text)
		return []rsItem{{Type: "message", Role: "user", Content: content}}, nil
	}
	var items []rsItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, refuse("Invalid type for 'input': expected a string or an array of input items (%v).", err)
	}
	return items, nil
}

// conversation builds the chat-form messages of a request.
type conversation struct {
	msgs []openai.ChatCompletionMessage
	// joinable: the last message is an assistant message that function
	// calls may still join.
	joinable bool
	// reasoning is the summary of reasoning items waiting for the next
	// assistant message.
	reasoning []string
}

// assistant returns the assistant message the next output joins: the
// last one when joinable, else a new one with the waiting reasoning.
func (c *conversation) assistant() *openai.ChatCompletionMessage {
	if !c.joinable {
		c.msgs = append(c.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant,
			ReasoningContent: strings.Join(c.reasoning, "\n\n")})
		c.reasoning, c.joinable = nil, true
	}
	return &c.msgs[len(c.msgs)-1]
}

// add appends a message that is not the assistant's; reasoning that
// waited for an assistant message is dropped.
func (c *conversation) add(m openai.ChatCompletionMessage) {
	c.msgs = append(c.msgs, m)
	c.joinable, c.reasoning = false, nil
}

// chatMessages reads the instructions and the input items into chat-form
// messages, checking the items as they come.
func (f *responsesFormat) chatMessages(req rsRequest, items []rsItem) ([]openai.ChatCompletionMessage, error) {
	var c conversation
	if req.Instructions != nil && *req.Instructions != "" {
		c.add(openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: *req.Instructions})
	}
	stateless := req.Store != nil && !*req.Store
	calls := map[string]bool{}     // call ids of the function calls so far
	answered := map[string]bool{}  // call ids with an output
	var order []string             // call ids in input order
	reasoning := map[string]bool{} // ids of the verified reasoning items so far
	for i, it := range items {
		typ := it.Type
		if typ == "" && it.Role != "" {
			typ = "message"
		}
		switch typ {
		case "message":
			m, err := chatMessage(i, it)
			if err != nil {
				return nil, err
			}
			if m.Role != openai.ChatMessageRoleAssistant {
				c.add(m)
				continue
			}
			a := c.assistant()
			a.Content += m.Content
			a.MultiContent = append(a.MultiContent, m.MultiContent...)
		case "reasoning":
			if err := f.checkReasoning(i, it, stateless); err != nil {
				return nil, err
			}
			reasoning[it.ID] = true
			c.joinable = false
			for _, s := range it.Summary {
				if s.Text != "" {
					c.reasoning = append(c.reasoning, s.Text)
				}
			}
		case "function_call":
			if it.CallID == "" {
				return nil, refuse("Missing required parameter: 'input[%d].call_id'.", i)
			}
			if it.Name == "" {
				return nil, refuse("Missing required parameter: 'input[%d].name'.", i)
			}
			if iss, ok := f.issuedCall(it.CallID); ok && iss.reasoning != "" && !reasoning[iss.reasoning] {
				return nil, refuse("Item '%s' of type 'function_call' was provided without its required 'reasoning' item: '%s'.",
					iss.item, iss.reasoning)
			}
			if !calls[it.CallID] {
				order = append(order, it.CallID)
			}
			calls[it.CallID] = true
			a := c.assistant()
			a.ToolCalls = append(a.ToolCalls, openai.ToolCall{ID: it.CallID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: it.Name, Arguments: it.Arguments}})
		case "function_call_output":
			if !calls[it.CallID] {
				return nil, refuse("No tool call found for function call output with call_id %s.", it.CallID)
			}
			answered[it.CallID] = true
			out, err := outputText(it.Output)
			if err != nil {
				return nil, refuse("Invalid 'input[%d].output': %v.", i, err)
			}
			c.add(openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: it.CallID, Content: out})
		default:
			return nil, refuse("Invalid value: '%s'. The fake supports input items of type message, reasoning, "+
				"function_call and function_call_output (input[%d].type).", typ, i)
		}
	}
	for _, id := range order {
		if !answered[id] {
			return nil, refuse("No tool output found for function call %s.", id)
		}
	}
	return c.msgs, nil
}

// checkReasoning checks a reasoning item: an id, and, for a stateless
// request, the encrypted content the fake issued for that id.
func (f *responsesFormat) checkReasoning(i int, it rsItem, stateless bool) error {
	if it.ID == "" {
		return refuse("Missing required parameter: 'input[%d].id'.", i)
	}
	switch {
	case it.EncryptedContent != nil && *it.EncryptedContent != "":
		if !f.verify(it.ID, *it.EncryptedContent) {
			return refuse("The encrypted content for item %s could not be verified.", it.ID)
		}
	case stateless:
		return refuse("Item with id '%s' not found. Items are not persisted when `store` is set to false. "+
			"Try again with `store` set to true, or remove this item from your input.", it.ID)
	case !f.issuedReasoning(it.ID):
		return refuse("Item with id '%s' not found.", it.ID)
	}
	return nil
}

// chatMessage reads a message item.
func chatMessage(i int, it rsItem) (openai.ChatCompletionMessage, error) {
	role := it.Role
	switch role {
	case "user", "assistant":
	case "system", "developer":
		role = openai.ChatMessageRoleSystem
	default:
		return openai.ChatCompletionMessage{}, refuse("Invalid value: '%s'. Supported values are: 'assistant', "+
			"'system', 'developer', and 'user' (input[%d].role).", it.Role, i)
	}
	m := openai.ChatCompletionMessage{Role: role}
	var text string
	if err := json.Unmarshal(it.Content, &text); err == nil {
		m.Content = text
		return m, nil
	}
	var parts []rsPart
	if err := json.Unmarshal(it.Content, &parts); err != nil {
		return m, refuse("Invalid 'input[%d].content': expected a string or an array of content parts.", i)
	}
	var texts []string
	var multi []openai.ChatMessagePart
	images := false
	for j, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			texts = append(texts, p.Text)
			multi = append(multi, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: p.Text})
		case "refusal":
			texts = append(texts, p.Refusal)
			multi = append(multi, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: p.Refusal})
		case "input_image":
			images = true
			multi = append(multi, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL,
				ImageURL: &openai.ChatMessageImageURL{URL: p.ImageURL, Detail: openai.ImageURLDetail(p.Detail)}})
		default:
			return m, refuse("Invalid value: '%s' (input[%d].content[%d].type).", p.Type, i, j)
		}
	}
	if images {
		m.MultiContent = multi
	} else {
		m.Content = strings.Join(texts, "\n\n")
	}
	return m, nil
}

// outputText reads a function call's output: a string or text parts.
func outputText(raw json.RawMessage) (string, error) {
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return text, nil
	}
	var parts []rsPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("expected a string or an array of content parts")
	}
	var texts []string
	for _, p := range parts {
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, ""), nil
}

// chatTools reads the function tools of a request; others are skipped.
func chatTools(raw json.RawMessage) ([]openai.Tool, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var tools []rsTool
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, refuse("Invalid type for 'tools': expected an array of tools (%v).", err)
	}
	var out []openai.Tool
	for i, t := range tools {
		if t.Type != "function" {
			continue
		}
		if t.Name == "" {
			return nil, refuse("Missing required parameter: 'tools[%d].name'.", i)
		}
		def := &openai.FunctionDefinition{Name: t.Name, Description: t.Description}
		if len(t.Parameters) > 0 {
			def.Parameters = t.Parameters
		}
		if t.Strict != nil {
			def.Strict = *t.Strict
		}
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: def})
	}
	return out, nil
}
