package compress

import (
	"fmt"

	"github.com/talaria-agent/talaria/models"
)

func user(s string) models.Message      { return models.Message{Role: "user", Content: s} }
func sys(s string) models.Message       { return models.Message{Role: "system", Content: s} }
func assistant(s string) models.Message { return models.Message{Role: "assistant", Content: s} }

func call(ids ...string) models.Message {
	m := models.Message{Role: "assistant"}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, models.ToolCall{ID: id, Type: "function",
			Function: models.FunctionCall{Name: "fn_" + id, Arguments: `{}`}})
	}
	return m
}

func result(id string) models.Message {
	return models.Message{Role: "tool", ToolCallID: id, Name: "fn_" + id, Content: "out " + id}
}

// numbered gives each message a distinct IdemKey equal to its index.
func numbered(msgs ...models.Message) []models.Message {
	for i := range msgs {
		msgs[i].IdemKey = fmt.Sprint(i)
	}
	return msgs
}
