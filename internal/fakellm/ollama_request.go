//lint:file-ignore SA1019 max_tokens is the field OpenAI-compatible servers (and these wire formats) read; go-openai deprecates it only for OpenAI's o1 models

package fakellm

// This file reads an Ollama /api/chat request: its native shape, what
// Ollama refuses of it, and the chat-completions form it is recorded in
// (Request.Body).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// ollamaRequest is a /api/chat request as sent.
type ollamaRequest struct {
	Model    string                     `json:"model"`
	Messages []ollamaMessage            `json:"messages"`
	Tools    []openai.Tool              `json:"tools"`
	Stream   *bool                      `json:"stream"`
	Options  map[string]json.RawMessage `json:"options"`
}

// ollamaMessage is one message of a request.
type ollamaMessage struct {
	Role       string           `json:"role"`
	Content    string           `json:"content"`
	Thinking   string           `json:"thinking"`
	Images     []string         `json:"images"`
	ToolCalls  []ollamaToolCall `json:"tool_calls"`
	ToolName   string           `json:"tool_name"`
	ToolCallID string           `json:"tool_call_id"`
}

// ollamaToolCall is one tool call, of a request or an answer: Ollama's
// arguments are a JSON object; an id is optional (newer Ollama versions
// send one).
type ollamaToolCall struct {
	ID       string         `json:"id,omitempty"`
	Function ollamaFunction `json:"function"`
}

// ollamaFunction is a call's function.
type ollamaFunction struct {
	Index     int             `json:"index"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ollamaRoles are the roles Ollama takes.
var ollamaRoles = map[string]bool{"system": true, "user": true, "assistant": true, "tool": true}

// decodeOllama reads and checks a request; what Ollama refuses is an
// error.
func decodeOllama(raw []byte) (decoded, error) {
	var req ollamaRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return decoded{}, err
	}
	if err := validateOllama(req); err != nil {
		return decoded{}, err
	}
	chat, err := req.chatRequest()
	if err != nil {
		return decoded{}, err
	}
	stream := req.Stream == nil || *req.Stream // Ollama streams unless told not to
	chat.Stream = stream
	return decoded{chat: chat, stream: stream}, nil
}

// validateOllama refuses what Ollama refuses: no model, a role it does not
// know, tool call arguments that are not a JSON object. Pure.
func validateOllama(req ollamaRequest) error {
	if strings.TrimSpace(req.Model) == "" {
		return errors.New("model is required")
	}
	for i, m := range req.Messages {
		if !ollamaRoles[m.Role] {
			return fmt.Errorf("messages[%d]: invalid role %q: want system, user, assistant or tool", i, m.Role)
		}
		for j, c := range m.ToolCalls {
			if !isObjectOrNull(c.Function.Arguments) {
				return fmt.Errorf("messages[%d].tool_calls[%d].function.arguments: want a JSON object, got %s",
					i, j, clip(string(c.Function.Arguments), 40))
			}
		}
	}
	return nil
}

// isObjectOrNull reports whether raw is a JSON object, null or absent.
// Pure.
func isObjectOrNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return true
	}
	var obj map[string]json.RawMessage
	return strings.HasPrefix(s, "{") && json.Unmarshal(raw, &obj) == nil
}

// clip is s cut to n bytes, for an error message. Pure.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// chatRequest is the request in chat-completions form: tool calls with
// their arguments as JSON text and ids (the call's own, else derived from
// its place), tool results with the id of the call they answer (the id
// they name, else the first unanswered call of the last assistant message
// with their tool_name), options.num_predict as max_tokens.
func (req ollamaRequest) chatRequest() (openai.ChatCompletionRequest, error) {
	out := openai.ChatCompletionRequest{Model: req.Model, Tools: req.Tools}
	if raw, ok := req.Options["num_predict"]; ok {
		n, err := optionInt(raw)
		if err != nil {
			return out, fmt.Errorf("options.num_predict: %w", err)
		}
		out.MaxTokens = n
	}
	var pending []pendingCall
	for i, m := range req.Messages {
		msg := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ReasoningContent: m.Thinking}
		switch m.Role {
		case "assistant":
			pending = nil
			for j, c := range m.ToolCalls {
				args := argumentText(c.Function.Arguments)
				id := c.ID
				if id == "" {
					id = derivedCallID(i, j, c.Function.Name, args)
				}
				msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{ID: id, Type: openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: c.Function.Name, Arguments: args}})
				pending = append(pending, pendingCall{id: id, name: c.Function.Name})
			}
		case "tool":
			msg.ToolCallID = answeredCall(pending, m.ToolCallID, m.ToolName)
		default:
			pending = nil
		}
		out.Messages = append(out.Messages, msg)
	}
	return out, nil
}

// pendingCall is a call of the last assistant message and whether a
// result answered it.
type pendingCall struct {
	id, name string
	answered bool
}

// answeredCall marks and returns the id of the call a tool result
// answers: the one it names by id, else the first unanswered one of its
// tool (any, when it names none); "" when none is left.
func answeredCall(pending []pendingCall, id, name string) string {
	pick := func(match func(pendingCall) bool) string {
		for i := range pending {
			if !pending[i].answered && match(pending[i]) {
				pending[i].answered = true
				return pending[i].id
			}
		}
		return ""
	}
	if id != "" {
		if got := pick(func(p pendingCall) bool { return p.id == id }); got != "" {
			return got
		}
	}
	return pick(func(p pendingCall) bool { return name == "" || p.name == name })
}

// argumentText is a call's arguments object as compact JSON text ("{}"
// for none). Pure.
func argumentText(raw json.RawMessage) string {
	var b bytes.Buffer
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" || json.Compact(&b, raw) != nil {
		return "{}"
	}
	return b.String()
}

// derivedCallID is the id the server gives a call of the request that
// came without one: from its message's place, its own place and a digest
// of the call, the same each time the call is sent. Pure.
func derivedCallID(message, index int, name, args string) string {
	sum := sha256.Sum256([]byte(name + "\x00" + args))
	return "call_" + strconv.Itoa(message) + "_" + strconv.Itoa(index) + "_" + hex.EncodeToString(sum[:4])
}

// optionInt reads an integer option (a JSON number without a fraction).
// Pure.
func optionInt(raw json.RawMessage) (int, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, fmt.Errorf("want a number, got %s", clip(string(raw), 40))
	}
	if f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
		return 0, fmt.Errorf("want an integer, got %s", clip(string(raw), 40))
	}
	return int(f), nil
}
