package llm

// This file assembles the Messages request of a Request: the converted
// conversation, the tools, max_tokens, extended thinking and the prompt
// cache breakpoints.

import (
	"slices"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	openai "github.com/sashabaranov/go-openai"
)

// Limits of an Anthropic request.
const (
	// AnthropicDefaultMaxTokens is max_tokens when the request sets none:
	// the API requires one.
	AnthropicDefaultMaxTokens = 8192
	// minThinkingBudget is the smallest thinking budget the API accepts.
	minThinkingBudget = 1024
	// cachedMessages is how many of the last messages get a cache
	// breakpoint (with the system prompt's: the API's maximum of four).
	cachedMessages = 3
)

// anthropicParams builds the Messages request of in for endpoint e.
func anthropicParams(e Endpoint, in Request) (anthropic.MessageNewParams, error) {
	system, turns := anthropicConversation(in)
	tools, err := anthropicTools(in.Tools)
	if err != nil {
		return anthropic.MessageNewParams{}, err
	}
	maxTokens := in.MaxTokens
	if maxTokens <= 0 {
		maxTokens = AnthropicDefaultMaxTokens
	}
	params := anthropic.MessageNewParams{Model: anthropic.Model(e.Model), System: system, Tools: tools}
	if e.ThinkingBudget > 0 && thinkingAllowed(turns) {
		budget := max(e.ThinkingBudget, minThinkingBudget)
		if maxTokens <= budget {
			maxTokens += budget // max_tokens counts the thinking: room for the answer after it
		}
		params.Thinking = anthropic.ThinkingConfigParamUnion{
			OfEnabled: &anthropic.ThinkingConfigEnabledParam{BudgetTokens: int64(budget)},
		}
	} else {
		turns = withoutThinking(turns)
	}
	params.MaxTokens = int64(maxTokens)
	if e.Caching != CacheNone {
		markCache(params.System, turns)
	}
	params.Messages = make([]anthropic.MessageParam, len(turns))
	for i, t := range turns {
		if t.user {
			params.Messages[i] = anthropic.NewUserMessage(t.blocks...)
		} else {
			params.Messages[i] = anthropic.NewAssistantMessage(t.blocks...)
		}
	}
	return params, nil
}

// thinkingAllowed reports whether a request with these turns can be sent
// with thinking on. With thinking on, the API wants the assistant message
// that a request continues (the last one of a trailing tool-use loop, or
// a final assistant prefill) to begin with the signed thinking block the
// model wrote before its calls. A message written by another wire format
// (a fallback endpoint answered mid-turn) has none, and a prefill has
// none either: such a request is sent without thinking, which the API
// accepts, rather than refused. Thinking comes back at the next user
// message, which starts a new loop. Pure.
func thinkingAllowed(turns []antTurn) bool {
	n := len(turns)
	if n == 0 {
		return true
	}
	last := turns[n-1]
	if !last.user {
		return false
	}
	if n < 2 || !hasToolResult(last) {
		return true
	}
	return startsWithThinking(turns[n-2])
}

// hasToolResult reports whether a turn holds a tool_result block. Pure.
func hasToolResult(t antTurn) bool {
	return slices.ContainsFunc(t.blocks, func(b anthropic.ContentBlockParamUnion) bool { return b.OfToolResult != nil })
}

// startsWithThinking reports whether a turn begins with a thinking or
// redacted_thinking block. Pure.
func startsWithThinking(t antTurn) bool {
	return len(t.blocks) > 0 && (t.blocks[0].OfThinking != nil || t.blocks[0].OfRedactedThinking != nil)
}

// withoutThinking is turns with their thinking blocks left out, for a
// request sent without thinking. Pure.
func withoutThinking(turns []antTurn) []antTurn {
	out := make([]antTurn, 0, len(turns))
	for _, t := range turns {
		kept := make([]anthropic.ContentBlockParamUnion, 0, len(t.blocks))
		for _, b := range t.blocks {
			if b.OfThinking == nil && b.OfRedactedThinking == nil {
				kept = append(kept, b)
			}
		}
		out = appendTurn(out, antTurn{user: t.user, blocks: kept})
	}
	return out
}

// markCache sets the prompt cache breakpoints of the CacheSystemAnd3
// layout: the last system block and the last block of each of the last
// three messages that can carry one (a thinking block cannot).
func markCache(system []anthropic.TextBlockParam, turns []antTurn) {
	if n := len(system); n > 0 {
		system[n-1].CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	marked := 0
	for i := len(turns) - 1; i >= 0 && marked < cachedMessages; i-- {
		blocks := turns[i].blocks
		for j := len(blocks) - 1; j >= 0; j-- {
			if cc := blocks[j].GetCacheControl(); cc != nil {
				*cc = anthropic.NewCacheControlEphemeralParam()
				marked++
				break
			}
		}
	}
}

// anthropicTools converts function tools; other tool types are skipped.
func anthropicTools(tools []openai.Tool) ([]anthropic.ToolUnionParam, error) {
	return functionTools(tools, func(fn *openai.FunctionDefinition, schema map[string]any) anthropic.ToolUnionParam {
		tool := anthropic.ToolParam{Name: fn.Name, InputSchema: inputSchema(schema)}
		if fn.Description != "" {
			tool.Description = anthropic.String(fn.Description)
		}
		return anthropic.ToolUnionParam{OfTool: &tool}
	})
}

// inputSchema is a JSON schema object as the SDK's input_schema: its
// properties and required list in their fields, the rest as extra fields
// (the type is always "object"). Pure.
func inputSchema(schema map[string]any) anthropic.ToolInputSchemaParam {
	var s anthropic.ToolInputSchemaParam
	for k, v := range schema {
		switch k {
		case "type":
		case "properties":
			s.Properties = v
		case "required":
			if list, ok := v.([]any); ok {
				for _, item := range list {
					if name, ok := item.(string); ok {
						s.Required = append(s.Required, name)
					}
				}
			}
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s
}
