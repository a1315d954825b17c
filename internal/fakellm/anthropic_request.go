//lint:file-ignore SA1019 max_tokens is the field OpenAI-compatible servers (and these wire formats) read; go-openai deprecates it only for OpenAI's o1 models

package fakellm

// This file reads an Anthropic Messages request: its native shape, and
// the chat-completions form it is recorded in (Request.Body).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// antRequest is a Messages request as sent.
type antRequest struct {
	Model     string             `json:"model"`
	MaxTokens *int               `json:"max_tokens"`
	System    json.RawMessage    `json:"system"`
	Messages  []antMessage       `json:"messages"`
	Tools     []json.RawMessage  `json:"tools"`
	Stream    bool               `json:"stream"`
	Thinking  *antThinkingConfig `json:"thinking"`
}

// antThinkingConfig is a request's thinking field.
type antThinkingConfig struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

// antMessage is one message as sent: its content is a string or a list
// of blocks.
type antMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// antBlock is one content block, of any type.
type antBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"`
	IsError      bool            `json:"is_error"`
	Thinking     *string         `json:"thinking"`
	Signature    string          `json:"signature"`
	Data         string          `json:"data"`
	Source       *antImageSource `json:"source"`
	CacheControl json.RawMessage `json:"cache_control"`

	// raw is the block as sent (for a string content, the text block it
	// stands for).
	raw json.RawMessage
}

// antImageSource is an image block's source.
type antImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
}

// antTool is one tool definition.
type antTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl json.RawMessage `json:"cache_control"`

	raw json.RawMessage
}

// antParsed is a request read into blocks.
type antParsed struct {
	req      antRequest
	system   []antBlock
	messages []antParsedMessage
	tools    []antTool
}

// antParsedMessage is one message read into blocks.
type antParsedMessage struct {
	role   string
	blocks []antBlock
}

// cached reports whether a block or tool carries a cache_control.
func cached(cc json.RawMessage) bool {
	s := strings.TrimSpace(string(cc))
	return s != "" && s != "null"
}

// parseAnthropic reads a request body into blocks; it fails on what is
// not a Messages request at all (the shape, not the rules).
func parseAnthropic(raw []byte) (*antParsed, error) {
	var p antParsed
	if err := json.Unmarshal(raw, &p.req); err != nil {
		return nil, err
	}
	var err error
	if p.system, err = parseBlocks(p.req.System); err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	for i, m := range p.req.Messages {
		blocks, err := parseBlocks(m.Content)
		if err != nil {
			return nil, fmt.Errorf("messages.%d.content: %w", i, err)
		}
		p.messages = append(p.messages, antParsedMessage{role: m.Role, blocks: blocks})
	}
	for i, raw := range p.req.Tools {
		var t antTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("tools.%d: %w", i, err)
		}
		t.raw = raw
		p.tools = append(p.tools, t)
	}
	return &p, nil
}

// parseBlocks reads a content field: absent, a string (one text block) or
// a list of blocks.
func parseBlocks(raw json.RawMessage) ([]antBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, err
		}
		block, err := json.Marshal(map[string]string{"type": "text", "text": text})
		if err != nil {
			return nil, fmt.Errorf("encoding a text block: %w", err)
		}
		return []antBlock{{Type: "text", Text: &text, raw: block}}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("input should be a valid list or string: %w", err)
	}
	blocks := make([]antBlock, len(items))
	for i, item := range items {
		if err := json.Unmarshal(item, &blocks[i]); err != nil {
			return nil, fmt.Errorf("%d: %w", i, err)
		}
		blocks[i].raw = item
	}
	return blocks, nil
}

// text is a text block's text ("" when it has none).
func (b antBlock) text() string {
	if b.Text == nil {
		return ""
	}
	return *b.Text
}

// resultText is the text of a tool_result block: its string content or
// the text of its text blocks.
func (b antBlock) resultText() string {
	inner, err := parseBlocks(b.Content)
	if err != nil {
		return ""
	}
	var texts []string
	for _, c := range inner {
		if c.Type == "text" {
			texts = append(texts, c.text())
		}
	}
	return strings.Join(texts, "\n\n")
}

// chatRequest is the request in chat-completions form.
func (p *antParsed) chatRequest() openai.ChatCompletionRequest {
	out := openai.ChatCompletionRequest{Model: p.req.Model, Stream: p.req.Stream}
	if p.req.MaxTokens != nil {
		out.MaxTokens = *p.req.MaxTokens
	}
	var system []string
	for _, b := range p.system {
		system = append(system, b.text())
	}
	if len(system) > 0 {
		out.Messages = append(out.Messages, openai.ChatCompletionMessage{
			Role: openai.ChatMessageRoleSystem, Content: strings.Join(system, "\n\n")})
	}
	for _, m := range p.messages {
		if m.role == "assistant" {
			out.Messages = append(out.Messages, assistantMessage(m.blocks))
		} else {
			out.Messages = append(out.Messages, userMessages(m.blocks)...)
		}
	}
	for _, t := range p.tools {
		def := &openai.FunctionDefinition{Name: t.Name, Description: t.Description}
		if len(t.InputSchema) > 0 {
			def.Parameters = t.InputSchema
		}
		out.Tools = append(out.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: def})
	}
	return out
}

// assistantMessage is an assistant message in chat form: thinking as
// reasoning, text as content, tool_use blocks as tool calls.
func assistantMessage(blocks []antBlock) openai.ChatCompletionMessage {
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}
	var texts, thinking []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.text())
		case "thinking":
			if b.Thinking != nil {
				thinking = append(thinking, *b.Thinking)
			}
		case "tool_use":
			args := string(bytes.TrimSpace(b.Input))
			if args == "" || args == "null" {
				args = "{}"
			}
			msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{
				ID: b.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: b.Name, Arguments: args},
			})
		}
	}
	msg.Content = strings.Join(texts, "\n\n")
	msg.ReasoningContent = strings.Join(thinking, "\n\n")
	return msg
}

// userMessages is a user message in chat form: a tool message for each
// tool_result block, then a user message with the rest (text, and
// images as image_url parts) when there is any.
func userMessages(blocks []antBlock) []openai.ChatCompletionMessage {
	var (
		out    []openai.ChatCompletionMessage
		texts  []string
		parts  []openai.ChatMessagePart
		images bool
	)
	for _, b := range blocks {
		switch b.Type {
		case "tool_result":
			out = append(out, openai.ChatCompletionMessage{
				Role: openai.ChatMessageRoleTool, ToolCallID: b.ToolUseID, Content: b.resultText()})
		case "text":
			texts = append(texts, b.text())
			parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: b.text()})
		case "image":
			if b.Source == nil {
				continue
			}
			url := b.Source.URL
			if b.Source.Type == "base64" {
				url = "data:" + b.Source.MediaType + ";base64," + b.Source.Data
			}
			images = true
			parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL,
				ImageURL: &openai.ChatMessageImageURL{URL: url}})
		}
	}
	switch {
	case images:
		out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, MultiContent: parts})
	case len(texts) > 0:
		out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: strings.Join(texts, "\n\n")})
	}
	return out
}
