package api

import (
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/models"
)

// What an OpenAI-shaped request carries into a turn. A turn takes text
// and pictures: the last user message is its input, the request's system
// (and developer) messages and the Responses API's instructions go before
// it as a block that says what they are, and the user and assistant
// messages before it may seed a new session. A user message's pictures
// (image_url, input_image parts) ride with it (pictures.go). What a turn
// cannot carry is refused, naming the field, never dropped: a content
// part that is neither text nor a user's picture (audio, a file) and a
// role the API does not know. A client's own tool calls and tool results
// are left out: Talaria runs its own tools, and this is documented in
// docs/api.md.

// turnText is what a request asks of its turn.
type turnText struct {
	// instructions are the texts of the request's system messages (and
	// the Responses API's instructions), in order.
	instructions []string
	// last is the text of the last user message.
	last string
	// pictures are the pictures of the last user message, in order.
	pictures []pictureRef
	// prior are the user and assistant texts before it, oldest first.
	prior []models.Message
	// priorPictures are the pictures of prior's user messages, by index
	// in prior.
	priorPictures map[int][]pictureRef
}

// addPrior adds an earlier message and its pictures; a message with
// neither text nor pictures is left out.
func (t *turnText) addPrior(role, text string, pics []pictureRef) {
	if strings.TrimSpace(text) == "" && len(pics) == 0 {
		return
	}
	if len(pics) > 0 {
		if t.priorPictures == nil {
			t.priorPictures = map[int][]pictureRef{}
		}
		t.priorPictures[len(t.prior)] = pics
	}
	t.prior = append(t.prior, models.Message{Role: role, Content: text})
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
		"%s is %q: a turn carries text and a user's pictures only, so %s parts are refused rather than dropped (send the text, or a file path the agent can read)",
		param, oneLine(typ), oneLine(typ))
}

// pictureRoleError refuses a picture in a message that is not the user's.
// Pure.
func pictureRoleError(param, role string) error {
	return badParam(param, "unsupported_content", "%s is a picture in a %s message: only user messages carry pictures", param, oneLine(role))
}

// roleError refuses a role the API does not know. Pure.
func roleError(param, role, known string) error {
	return badParam(param, "invalid_role", "%s is %q, not one of %s", param, oneLine(role), known)
}

// chatMessageText is the text of a chat message: its content, or its
// text parts joined by newlines, and the pictures of its image_url parts
// (a user message's only); any other part is an error naming it. Pure.
func chatMessageText(i int, m openai.ChatCompletionMessage) (string, []pictureRef, error) {
	if len(m.MultiContent) == 0 {
		return m.Content, nil, nil
	}
	parts := make([]string, 0, len(m.MultiContent))
	var pics []pictureRef
	for j, p := range m.MultiContent {
		param := fmt.Sprintf("messages[%d].content[%d]", i, j)
		switch p.Type {
		case openai.ChatMessagePartTypeText:
			parts = append(parts, p.Text)
		case openai.ChatMessagePartTypeImageURL:
			if m.Role != openai.ChatMessageRoleUser {
				return "", nil, pictureRoleError(param, m.Role)
			}
			if p.ImageURL == nil {
				return "", nil, badParam(param+".image_url", "invalid_image_url", "%s.image_url is missing", param)
			}
			pics = append(pics, pictureRef{param: param + ".image_url.url", url: p.ImageURL.URL})
		default:
			return "", nil, contentError(param+".type", string(p.Type))
		}
	}
	return strings.Join(parts, "\n"), pics, nil
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
			text, _, err := chatMessageText(i, m)
			if err != nil {
				return t, err
			}
			t.instructions = append(t.instructions, text)
		case openai.ChatMessageRoleUser, openai.ChatMessageRoleAssistant:
			if i > last {
				continue
			}
			text, pics, err := chatMessageText(i, m)
			if err != nil {
				return t, err
			}
			if i == last {
				t.last, t.pictures = text, pics
			} else {
				t.addPrior(m.Role, text, pics)
			}
		case openai.ChatMessageRoleTool, openai.ChatMessageRoleFunction:
		default:
			return t, roleError(fmt.Sprintf("messages[%d].role", i), m.Role, chatRoles)
		}
	}
	return t, checkLast(fmt.Sprintf("messages[%d].content", last), t.last, len(t.pictures))
}

// checkLast refuses an empty last user message (no text and no
// pictures), which instructions before it would otherwise hide. Pure.
func checkLast(param, text string, pictures int) error {
	if strings.TrimSpace(text) == "" && pictures == 0 {
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

// responsesPart is one content part of a Responses API input message:
// text, or a picture (input_image) by image_url (a data: URL or an
// https:// address; some clients send it as {"url": ...}) or by file_id.
type responsesPart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	ImageURL json.RawMessage `json:"image_url"`
	FileID   string          `json:"file_id"`
}

// imageURL is an input_image part's address: image_url as a string, or
// as an object's url; false when it has none. Pure.
func (p responsesPart) imageURL() (string, bool) {
	var s string
	if json.Unmarshal(p.ImageURL, &s) == nil {
		return s, true
	}
	var o struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(p.ImageURL, &o) == nil && o.URL != "" {
		return o.URL, true
	}
	return "", false
}

// responsesText is the text of an input message's content: a string, or
// its text parts joined by newlines, and the pictures of its input_image
// parts (a user message's only); any other part is an error naming it.
// Pure.
func responsesText(i int, role string, raw json.RawMessage) (string, []pictureRef, error) {
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return text, nil, nil
	}
	var parts []responsesPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, badParam(fmt.Sprintf("input[%d].content", i), "invalid_input", "input[%d].content must be a string or a list of parts", i)
	}
	texts := make([]string, 0, len(parts))
	var pics []pictureRef
	for j, p := range parts {
		param := fmt.Sprintf("input[%d].content[%d]", i, j)
		switch p.Type {
		case "input_text", "output_text", "text":
			texts = append(texts, p.Text)
		case "input_image":
			if role != "user" {
				return "", nil, pictureRoleError(param, role)
			}
			addr, ok := p.imageURL()
			if !ok {
				if p.FileID != "" {
					return "", nil, badParam(param+".file_id", "unsupported_image",
						"%s.file_id names an uploaded file, which this API does not keep: send image_url as a data: URL or an https:// address", param)
				}
				return "", nil, badParam(param+".image_url", "invalid_image_url", "%s.image_url is missing", param)
			}
			pics = append(pics, pictureRef{param: param + ".image_url", url: addr})
		default:
			return "", nil, contentError(param+".type", p.Type)
		}
	}
	return strings.Join(texts, "\n"), pics, nil
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
		return t, checkLast("input", t.last, 0)
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
			text, _, err := responsesText(i, it.Role, it.Content)
			if err != nil {
				return t, err
			}
			t.instructions = append(t.instructions, text)
		case "user", "assistant":
			if i > last {
				continue
			}
			text, pics, err := responsesText(i, it.Role, it.Content)
			if err != nil {
				return t, err
			}
			if i == last {
				t.last, t.pictures = text, pics
			} else {
				t.addPrior(it.Role, text, pics)
			}
		default:
			return t, roleError(fmt.Sprintf("input[%d].role", i), it.Role, responsesRoles)
		}
	}
	return t, checkLast(fmt.Sprintf("input[%d].content", last), t.last, len(t.pictures))
}
