package fakellm

// This file checks a Messages request against the rules the real API
// enforces, so that a client that breaks one fails here as it would
// there. Messages follow the real API's wording.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Limits of the Messages API the fake enforces.
const (
	// minThinkingBudget is the smallest thinking budget accepted.
	minThinkingBudget = 1024
	// maxCacheBreakpoints is how many blocks may carry cache_control.
	maxCacheBreakpoints = 4
)

// toolIDPattern is what a tool_use id must match.
var toolIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// validateAnthropic checks a parsed request; verify reports whether a
// thinking block's signature is one the server issued for its text.
func validateAnthropic(p *antParsed, verify func(thinking, signature string) bool) error {
	req := p.req
	switch {
	case strings.TrimSpace(req.Model) == "":
		return errors.New("model: Field required")
	case req.MaxTokens == nil:
		return errors.New("max_tokens: Field required")
	case *req.MaxTokens < 1:
		return errors.New("max_tokens: Input should be greater than or equal to 1")
	case len(p.messages) == 0:
		return errors.New("messages: Field required: at least one message is required")
	}
	for i, b := range p.system {
		if b.Type != "text" {
			return fmt.Errorf("system.%d.type: Input should be 'text'", i)
		}
		if err := checkText(b.text(), fmt.Sprintf("system.%d.text", i)); err != nil {
			return err
		}
	}
	if err := validateMessages(p.messages); err != nil {
		return err
	}
	if err := validateThinking(p, verify); err != nil {
		return err
	}
	if n := countCacheControl(p); n > maxCacheBreakpoints {
		//lint:ignore ST1005 the Anthropic API's own error text, as it sends it
		return fmt.Errorf("A maximum of %d blocks with cache_control may be provided. Found %d.", maxCacheBreakpoints, n)
	}
	return nil
}

// checkText refuses an empty or blank text block.
func checkText(text, where string) error {
	switch {
	case text == "":
		return fmt.Errorf("%s: text content blocks must be non-empty", where)
	case strings.TrimSpace(text) == "":
		return fmt.Errorf("%s: text content blocks must contain non-whitespace text", where)
	}
	return nil
}

// validateMessages checks roles, content and the pairing of tool_use and
// tool_result blocks.
func validateMessages(msgs []antParsedMessage) error {
	for i, m := range msgs {
		if m.role != "user" && m.role != "assistant" {
			return fmt.Errorf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		if i == 0 && m.role != "user" {
			return errors.New(`messages: first message must use the "user" role`)
		}
		if i > 0 && msgs[i-1].role == m.role {
			return fmt.Errorf(`messages: roles must alternate between "user" and "assistant", but found multiple %q roles in a row`, m.role)
		}
		final := i == len(msgs)-1
		if len(m.blocks) == 0 && !(final && m.role == "assistant") {
			return fmt.Errorf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		if err := validateBlocks(i, m); err != nil {
			return err
		}
		if final && m.role == "assistant" {
			if n := len(m.blocks); n > 0 && m.blocks[n-1].Type == "text" {
				text := m.blocks[n-1].text()
				if strings.TrimRightFunc(text, unicode.IsSpace) != text {
					return errors.New("messages: final assistant content cannot end with trailing whitespace")
				}
			}
		}
	}
	return validatePairing(msgs)
}

// validateBlocks checks the blocks of message i one by one.
func validateBlocks(i int, m antParsedMessage) error {
	ids := map[string]bool{}
	for j, b := range m.blocks {
		where := fmt.Sprintf("messages.%d.content.%d", i, j)
		switch b.Type {
		case "text":
			if err := checkText(b.text(), where+".text"); err != nil {
				return err
			}
		case "image", "document":
		case "tool_use":
			if m.role != "assistant" {
				return fmt.Errorf("%s: tool_use blocks may only appear in assistant messages", where)
			}
			if !toolIDPattern.MatchString(b.ID) {
				return fmt.Errorf("%s.id: String should match pattern '^[a-zA-Z0-9_-]+$'", where)
			}
			if ids[b.ID] {
				return fmt.Errorf("%s: `tool_use` ids must be unique", where)
			}
			ids[b.ID] = true
			if strings.TrimSpace(b.Name) == "" {
				return fmt.Errorf("%s.name: Field required", where)
			}
			if in := bytes.TrimSpace(b.Input); len(in) == 0 || in[0] != '{' || !json.Valid(in) {
				return fmt.Errorf("%s.input: Input should be a valid dictionary", where)
			}
		case "tool_result":
			if m.role != "user" {
				return fmt.Errorf("%s: tool_result blocks may only appear in user messages", where)
			}
			if !toolIDPattern.MatchString(b.ToolUseID) {
				return fmt.Errorf("%s.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'", where)
			}
			inner, err := parseBlocks(b.Content)
			if err != nil {
				return fmt.Errorf("%s.content: %w", where, err)
			}
			for k, c := range inner {
				if c.Type == "text" {
					if err := checkText(c.text(), fmt.Sprintf("%s.content.%d.text", where, k)); err != nil {
						return err
					}
				}
			}
		case "thinking", "redacted_thinking":
			if m.role != "assistant" {
				return fmt.Errorf("%s: thinking blocks may only appear in assistant messages", where)
			}
			if b.Type == "thinking" && (b.Thinking == nil || b.Signature == "") {
				return fmt.Errorf("%s: thinking blocks need their thinking and signature fields", where)
			}
			if b.Type == "redacted_thinking" && b.Data == "" {
				return fmt.Errorf("%s.data: Field required", where)
			}
		default:
			return fmt.Errorf("%s.type: Input tag '%s' found using 'type' does not match any of the expected tags", where, b.Type)
		}
	}
	return nil
}

// validatePairing checks that each tool_result answers a tool_use of the
// assistant message just before it and that every tool_use is answered
// in the next message.
func validatePairing(msgs []antParsedMessage) error {
	for i, m := range msgs {
		if m.role != "user" {
			continue
		}
		calls := map[string]bool{}
		if i > 0 {
			for _, b := range msgs[i-1].blocks {
				if b.Type == "tool_use" {
					calls[b.ID] = true
				}
			}
		}
		for j, b := range m.blocks {
			if b.Type != "tool_result" {
				continue
			}
			if !calls[b.ToolUseID] {
				//lint:ignore ST1005 the Anthropic API's own error text, as it sends it
				return fmt.Errorf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. "+
					"Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolUseID)
			}
		}
	}
	for i, m := range msgs {
		if m.role != "assistant" {
			continue
		}
		answered := map[string]bool{}
		if i+1 < len(msgs) {
			for _, b := range msgs[i+1].blocks {
				if b.Type == "tool_result" {
					answered[b.ToolUseID] = true
				}
			}
		}
		var missing []string
		for _, b := range m.blocks {
			if b.Type == "tool_use" && !answered[b.ID] {
				missing = append(missing, b.ID)
			}
		}
		if len(missing) > 0 {
			//lint:ignore ST1005 the Anthropic API's own error text, as it sends it
			return fmt.Errorf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. "+
				"Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i+1, strings.Join(missing, ", "))
		}
	}
	return nil
}

// validateThinking checks the thinking configuration and, with thinking
// enabled, that the assistant message the request continues (the last
// one of a trailing tool-use loop, or a final assistant message) begins
// with a thinking block the server signed.
func validateThinking(p *antParsed, verify func(thinking, signature string) bool) error {
	th := p.req.Thinking
	if th == nil {
		return nil
	}
	switch th.Type {
	case "disabled", "adaptive":
		return nil
	case "enabled":
	default:
		return fmt.Errorf("thinking.type: Input tag '%s' found using 'type' does not match any of the expected tags", th.Type)
	}
	if th.BudgetTokens < minThinkingBudget {
		return fmt.Errorf("thinking.enabled.budget_tokens: Input should be greater than or equal to %d", minThinkingBudget)
	}
	if th.BudgetTokens >= *p.req.MaxTokens {
		return errors.New("`max_tokens` must be greater than `thinking.budget_tokens`")
	}
	i := continuedAssistant(p.messages)
	if i < 0 {
		return nil
	}
	blocks := p.messages[i].blocks
	if len(blocks) == 0 || (blocks[0].Type != "thinking" && blocks[0].Type != "redacted_thinking") {
		found := "nothing"
		if len(blocks) > 0 {
			found = "`" + blocks[0].Type + "`"
		}
		//lint:ignore ST1005 the Anthropic API's own error text, as it sends it
		return fmt.Errorf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found %s. "+
			"When `thinking` is enabled, a final `assistant` message must start with a thinking block "+
			"(preceeding the lastmost set of `tool_use` and `tool_result` blocks). "+
			"We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`.", i, found)
	}
	// A redacted block is opaque: the fake never issues one and cannot
	// check it.
	if b := blocks[0]; b.Type == "thinking" && !verify(*b.Thinking, b.Signature) {
		return fmt.Errorf("messages.%d.content.0: Invalid `signature` in `thinking` block", i)
	}
	return nil
}

// continuedAssistant is the index of the assistant message a request
// continues: a final assistant message, or the one before a final user
// message of tool results; -1 when there is none.
func continuedAssistant(msgs []antParsedMessage) int {
	n := len(msgs)
	if n == 0 {
		return -1
	}
	if msgs[n-1].role == "assistant" {
		return n - 1
	}
	if n < 2 || msgs[n-2].role != "assistant" {
		return -1
	}
	for _, b := range msgs[n-1].blocks {
		if b.Type == "tool_result" {
			return n - 2
		}
	}
	return -1
}

// countCacheControl counts the tools, system blocks and message blocks
// that carry cache_control.
func countCacheControl(p *antParsed) int {
	n := 0
	for _, t := range p.tools {
		if cached(t.CacheControl) {
			n++
		}
	}
	for _, b := range p.system {
		if cached(b.CacheControl) {
			n++
		}
	}
	for _, m := range p.messages {
		for _, b := range m.blocks {
			if cached(b.CacheControl) {
				n++
			}
		}
	}
	return n
}
