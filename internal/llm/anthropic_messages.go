package llm

// This file converts a Request's chat-completions messages into Anthropic
// messages, and repairs what the Messages API would refuse: roles that do
// not alternate, a first message that is not the user's, empty text, tool
// results without their call and calls without their result (a
// conversation continued from another wire format has them).

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	openai "github.com/sashabaranov/go-openai"
)

// anthropicOpening is the text of the user message put first when a
// conversation does not begin with one: the API wants the user first.
const anthropicOpening = "(The conversation continues.)"

// antTurn is one Anthropic message being built: whose it is and its
// content blocks.
type antTurn struct {
	user   bool
	blocks []anthropic.ContentBlockParamUnion
}

// anthropicConversation converts messages into the system blocks and the
// alternating user and assistant turns of a valid request. Replayed
// thinking blocks come first in the assistant messages they belong to.
// Pure.
func anthropicConversation(in Request) ([]anthropic.TextBlockParam, []antTurn) {
	var (
		system []anthropic.TextBlockParam
		turns  []antTurn
	)
	for _, m := range in.Messages {
		switch m.Role {
		case openai.ChatMessageRoleSystem, openai.ChatMessageRoleDeveloper:
			if text := messageText(m); strings.TrimSpace(text) != "" {
				system = append(system, anthropic.TextBlockParam{Text: text})
			}
		case openai.ChatMessageRoleAssistant:
			turns = appendTurn(turns, antTurn{blocks: assistantBlocks(m, in.Replay)})
		case openai.ChatMessageRoleTool, openai.ChatMessageRoleFunction:
			turns = appendTurn(turns, antTurn{user: true, blocks: []anthropic.ContentBlockParamUnion{toolResultBlock(m)}})
		default:
			turns = appendTurn(turns, antTurn{user: true, blocks: userBlocks(m)})
		}
	}
	return system, finishTurns(pairToolBlocks(turns))
}

// appendTurn adds t to turns, merged into the last turn when it has the
// same role; a turn without blocks is left out. Pure.
func appendTurn(turns []antTurn, t antTurn) []antTurn {
	if len(t.blocks) == 0 {
		return turns
	}
	if n := len(turns); n > 0 && turns[n-1].user == t.user {
		merged := append(append([]anthropic.ContentBlockParamUnion(nil), turns[n-1].blocks...), t.blocks...)
		turns[n-1] = antTurn{user: t.user, blocks: merged}
		return turns
	}
	return append(turns, t)
}

// pairToolBlocks makes every user turn answer exactly the tool calls of
// the assistant turn before it: a result for another call (or a second
// one for the same call) is dropped, a call without a result is answered
// with missingOutput as an error, results come first and in the order of
// the calls. An assistant turn with calls that ends the conversation gets
// a user turn of such answers. Pure.
func pairToolBlocks(turns []antTurn) []antTurn {
	out := make([]antTurn, 0, len(turns)+1)
	for _, t := range turns {
		if t.user {
			var calls []string
			if n := len(out); n > 0 && !out[n-1].user {
				calls = toolUseIDs(out[n-1])
			}
			out = appendTurn(out, antTurn{user: true, blocks: answerCalls(t.blocks, calls)})
			continue
		}
		out = appendTurn(out, t)
	}
	if n := len(out); n > 0 && !out[n-1].user {
		if calls := toolUseIDs(out[n-1]); len(calls) > 0 {
			out = append(out, antTurn{user: true, blocks: answerCalls(nil, calls)})
		}
	}
	return out
}

// toolUseIDs lists the ids of a turn's tool_use blocks. Pure.
func toolUseIDs(t antTurn) []string {
	var ids []string
	for _, b := range t.blocks {
		if b.OfToolUse != nil {
			ids = append(ids, b.OfToolUse.ID)
		}
	}
	return ids
}

// answerCalls is a user turn's blocks with one tool_result for each of
// calls, in their order, before the other blocks. Pure.
func answerCalls(blocks []anthropic.ContentBlockParamUnion, calls []string) []anthropic.ContentBlockParamUnion {
	results := map[string]anthropic.ContentBlockParamUnion{}
	var rest []anthropic.ContentBlockParamUnion
	for _, b := range blocks {
		if b.OfToolResult == nil {
			rest = append(rest, b)
			continue
		}
		if _, seen := results[b.OfToolResult.ToolUseID]; !seen {
			results[b.OfToolResult.ToolUseID] = b
		}
	}
	out := make([]anthropic.ContentBlockParamUnion, 0, len(calls)+len(rest))
	answered := map[string]bool{}
	for _, id := range calls {
		if answered[id] {
			continue // a call listed twice is answered once
		}
		answered[id] = true
		if b, ok := results[id]; ok {
			out = append(out, b)
		} else {
			out = append(out, anthropic.NewToolResultBlock(id, missingOutput, true))
		}
	}
	return append(out, rest...)
}

// finishTurns puts a user turn first when there is none, and trims the
// trailing white space of a final assistant message (the API refuses it),
// dropping the message if nothing is left. Pure.
func finishTurns(turns []antTurn) []antTurn {
	if len(turns) == 0 || !turns[0].user {
		turns = append([]antTurn{{user: true, blocks: []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(anthropicOpening)}}}, turns...)
	}
	last := &turns[len(turns)-1]
	if last.user {
		return turns
	}
	for len(last.blocks) > 0 {
		b := last.blocks[len(last.blocks)-1]
		if b.OfText == nil {
			break
		}
		text := strings.TrimRightFunc(b.OfText.Text, unicode.IsSpace)
		if text != "" {
			last.blocks[len(last.blocks)-1] = anthropic.NewTextBlock(text)
			break
		}
		last.blocks = last.blocks[:len(last.blocks)-1]
	}
	if len(last.blocks) == 0 {
		turns = turns[:len(turns)-1]
	}
	return turns
}

// textBlock is a text block for text, nothing when it is empty or only
// white space (the API refuses such blocks). Pure.
func textBlock(text string) []anthropic.ContentBlockParamUnion {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(text)}
}

// userBlocks is the content of a user message: its text and images. Pure.
func userBlocks(m openai.ChatCompletionMessage) []anthropic.ContentBlockParamUnion {
	if len(m.MultiContent) == 0 {
		return textBlock(m.Content)
	}
	var blocks []anthropic.ContentBlockParamUnion
	for _, p := range m.MultiContent {
		switch {
		case p.Type == openai.ChatMessagePartTypeImageURL && p.ImageURL != nil && p.ImageURL.URL != "":
			blocks = append(blocks, imageBlock(p.ImageURL.URL))
		default:
			blocks = append(blocks, textBlock(p.Text)...)
		}
	}
	return blocks
}

// imageBlock is an image block for an image URL: inline data for a data
// URL, else the URL itself. Pure.
func imageBlock(url string) anthropic.ContentBlockParamUnion {
	if rest, ok := strings.CutPrefix(url, "data:"); ok {
		if meta, data, ok := strings.Cut(rest, ","); ok && strings.HasSuffix(meta, ";base64") {
			return anthropic.NewImageBlockBase64(strings.TrimSuffix(meta, ";base64"), data)
		}
	}
	return anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: url})
}

// assistantBlocks is the content of an assistant message: the thinking
// blocks replayed for it, its text, its tool calls as tool_use blocks.
// Pure.
func assistantBlocks(m openai.ChatCompletionMessage, replay map[string]Replay) []anthropic.ContentBlockParamUnion {
	var blocks []anthropic.ContentBlockParamUnion
	if len(m.ToolCalls) > 0 {
		if r, ok := replay[ReplayKey(m)]; ok && r.Wire == WireAnthropic {
			blocks = append(blocks, replayedThinking(r.Data)...)
		}
	}
	blocks = append(blocks, textBlock(messageText(m))...)
	for _, tc := range m.ToolCalls {
		name := cmp.Or(tc.Function.Name, "unknown_tool")
		blocks = append(blocks, anthropic.NewToolUseBlock(anthropicToolID(tc.ID), toolInput(tc.Function.Arguments), name))
	}
	return blocks
}

// replayedThinking reads the thinking blocks of a replay; what does not
// read, and a thinking block without its signature (the API would refuse
// it), is left out. Pure.
func replayedThinking(data json.RawMessage) []anthropic.ContentBlockParamUnion {
	var saved []anthropicThinking
	if json.Unmarshal(data, &saved) != nil {
		return nil
	}
	var blocks []anthropic.ContentBlockParamUnion
	for _, t := range saved {
		switch {
		case t.Type == "thinking" && t.Signature != "":
			blocks = append(blocks, anthropic.NewThinkingBlock(t.Signature, t.Thinking))
		case t.Type == "redacted_thinking" && t.Data != "":
			blocks = append(blocks, anthropic.NewRedactedThinkingBlock(t.Data))
		}
	}
	return blocks
}

// toolInput is a tool call's arguments as a tool_use input: the JSON
// object they are, or {} when they are not one. Pure.
func toolInput(arguments string) json.RawMessage {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(arguments), &obj); err != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(strings.TrimSpace(arguments))
}

// toolResultBlock is a tool message as a tool_result block. An empty
// result has no content (an empty text block would be refused). Pure.
func toolResultBlock(m openai.ChatCompletionMessage) anthropic.ContentBlockParamUnion {
	id := anthropicToolID(m.ToolCallID)
	text := messageText(m)
	if strings.TrimSpace(text) == "" {
		return anthropic.ContentBlockParamUnion{OfToolResult: &anthropic.ToolResultBlockParam{ToolUseID: id}}
	}
	return anthropic.NewToolResultBlock(id, text, false)
}

// anthropicToolID is a tool call id as the API accepts it
// (^[a-zA-Z0-9_-]+$): the id itself when it fits, else its characters
// that fit and a hash of the whole id, so that the tool_use and the
// tool_result of one call still match and two ids stay apart. Pure.
func anthropicToolID(id string) string {
	valid := id != ""
	var b strings.Builder
	for _, r := range id {
		if isToolIDChar(r) {
			b.WriteRune(r)
		} else {
			valid = false
			b.WriteByte('_')
		}
	}
	if valid {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	prefix := cmp.Or(strings.Trim(b.String(), "_"), "call")
	return prefix + "_" + hex.EncodeToString(sum[:6])
}

// isToolIDChar reports whether r may appear in a tool id. Pure.
func isToolIDChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}
