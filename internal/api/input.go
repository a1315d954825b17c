package api

import (
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/models"
)

// What an OpenAI-shaped request carries into a turn. A turn takes text:
// the last user message is its input, the request's system (and
// developer) messages and the Responses API's instructions go before it
// as a block that says what they are, and the user and assistant messages
// before it may seed a new session. What a turn cannot carry is refused,
// naming the field, never dropped: a content part that is not text (an
// image, audio, a file) and a role the API does not know. A client's own
// tool calls and tool results are left out: Talaria runs its own tools,
// and this is documented in docs/api.md.

// turnText is what a request asks of its turn.
type turnText struct {
	// instructions are the texts of the request's system messages (and
	// the Responses API's instructions), in order.
	instructions []string
	// last is the text of the last user message.
	last string
	// prior are the user and assistant texts before it, oldest first.
	prior []models.Message
}

// input is the turn's message: the instructions, then the last user
// message. Pure.
func (t turnText) input() string { return withInstructions(t.instructions, t.last) }

// Around a request's system messages in the turn's message.
const (
	instructionsOpen  = "[System message sent with this request]"
	instructionsClose = "[End of the system message]"
)

// withInstructions puts a request's system messages before the user's
// text, marked as such, so the model reads them as the request's
// instructions and the session keeps exactly what the model was sent.
// Blank ones are left out. Pure.
func withInstructions(instructions []string, text string) string {
	var kept []string
	for _, in := range instructions {
		if strings.TrimSpace(in) != "" {
			kept = append(kept, strings.TrimSpace(in))
		}
	}
	if len(kept) == 0 {
		return text
	}
	return instructionsOpen + "\n" + strings.Join(kept, "\n\n") + "\n" + instructionsClose + "\n\n" + text
}

// contentError refuses a content part a turn cannot carry. Pure.
func contentError(param, typ string) error {
	return badParam(param, "unsupported_content",
		"%s is %q: a turn carries text only, so %s parts are refused rather than dropped (send the text, or a file path the agent can read)",
		param, oneLine(typ), oneLine(typ))
}

// roleError refuses a role the API does not know. Pure.
func roleError(param, role, known string) error {
	return badParam(param, "invalid_role", "%s is %q, not one of %s", param, oneLine(role), known)
}

// chatMessageText is the text of a chat message: its content, or its
// text parts joined by newlines; any other part is an error naming it.
// Pure.
func chatMessageText(i int, m openai.ChatCompletionMessage) (string, error) {
	if len(m.MultiContent) == 0 {
		return m.Content, nil
	}
	parts := make([]string, 0, len(m.MultiContent))
	for j, p := range m.MultiContent {
		if p.Type != openai.ChatMessagePartTypeText {
			return "", contentError(fmt.Sprintf("messages[%d].content[%d].type", i, j), string(p.Type))
		}
		parts = append(parts, p.Text)
	}
	return strings.Join(parts, "\n"), nil
}

// chatRoles are the roles of a chat completion's messages.
const chatRoles = "system, developer, user, assistant, tool"

// readChat is what a chat completion's messages ask of a turn. Messages
// after the last user message, tool results and assistant tool calls are
// left out; system and developer messages become instructions. Pure.
func readChat(msgs []openai.ChatCompletionMessage) (turnText, error) {
	var t turnText
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleUser {
			last = i
			break
		}
	}
	if last < 0 {
		return t, badParam("messages", "no_user_message", "messages holds no user message")
	}
	for i, m := range msgs {
		switch m.Role {
		case openai.ChatMessageRoleSystem, openai.ChatMessageRoleDeveloper:
			text, err := chatMessageText(i, m)
			if err != nil {
				return t, err
			}
			t.instructions = append(t.instructions, text)
		case openai.ChatMessageRoleUser, openai.ChatMessageRoleAssistant:
			if i > last {
				continue
			}
			text, err := chatMessageText(i, m)
			if err != nil {
				return t, err
			}
			if i == last {
				t.last = text
			} else if strings.TrimSpace(text) != "" {
				t.prior = append(t.prior, models.Message{Role: m.Role, Content: text})
			}
		case openai.ChatMessageRoleTool, openai.ChatMessageRoleFunction:
		default:
			return t, roleError(fmt.Sprintf("messages[%d].role", i), m.Role, chatRoles)
		}
	}
	return t, checkLast(fmt.Sprintf("messages[%d].content", last), t.last)
}

// checkLast refuses an empty last user message, which instructions
// before it would otherwise hide. Pure.
func checkLast(param, text string) error {
	if strings.TrimSpace(text) == "" {
		return badParam(param, "empty_input", "%s, the last user message, is empty", param)
	}
	return nil
}

// responsesRoles are the roles of a Responses API input message.
const responsesRoles = "system, developer, user, assistant"

// responsesItem is one item of a Responses API input list.
type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// responsesPart is one content part of a Responses API input message.
type responsesPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// responsesText is the text of an input message's content: a string, or
// its text parts joined by newlines; any other part is an error naming
// it. Pure.
func responsesText(i int, raw json.RawMessage) (string, error) {
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return text, nil
	}
	var parts []responsesPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badParam(fmt.Sprintf("input[%d].content", i), "invalid_input", "input[%d].content must be a string or a list of parts", i)
	}
	texts := make([]string, 0, len(parts))
	for j, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			texts = append(texts, p.Text)
		default:
			return "", contentError(fmt.Sprintf("input[%d].content[%d].type", i, j), p.Type)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// readResponses is what a Responses API request asks of a turn: input as
// a string, or as a list whose last user message is the turn's input;
// system and developer messages, after instructions, become
// instructions. Items that are not messages (function calls and their
// outputs, reasoning) are left out, as a chat completion's tool traffic
// is. Pure.
func readResponses(raw json.RawMessage, instructions string) (turnText, error) {
	t := turnText{instructions: []string{instructions}}
	if len(raw) == 0 {
		return t, badParam("input", "no_user_message", "input is missing")
	}
	if err := json.Unmarshal(raw, &t.last); err == nil {
		return t, checkLast("input", t.last)
	}
	var items []responsesItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return t, badParam("input", "invalid_input", "input must be a string or a list of messages")
	}
	last := -1
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].Role == "user" && (items[i].Type == "" || items[i].Type == "message") {
			last = i
			break
		}
	}
	if last < 0 {
		return t, badParam("input", "no_user_message", "input holds no user message")
	}
	for i, it := range items {
		if it.Type != "" && it.Type != "message" {
			continue
		}
		switch it.Role {
		case "system", "developer":
			text, err := responsesText(i, it.Content)
			if err != nil {
				return t, err
			}
			t.instructions = append(t.instructions, text)
		case "user", "assistant":
			if i > last {
				continue
			}
			text, err := responsesText(i, it.Content)
			if err != nil {
				return t, err
			}
			if i == last {
				t.last = text
			} else if strings.TrimSpace(text) != "" {
				t.prior = append(t.prior, models.Message{Role: it.Role, Content: text})
			}
		default:
			return t, roleError(fmt.Sprintf("input[%d].role", i), it.Role, responsesRoles)
		}
	}
	return t, checkLast(fmt.Sprintf("input[%d].content", last), t.last)
}
