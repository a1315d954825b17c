package activities

import (
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/approval"
	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// TestDuplicateKeyCallIsAnsweredAsInvalid: a terminal call whose arguments
// hold "command" twice (once in another case) is invalid before anything
// assesses or runs it, and the model reads why.
func TestDuplicateKeyCallIsAnsweredAsInvalid(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args string
		has  string
	}{
		{"case clash", "terminal", `{"command":"rm -rf ./victim","Command":"ls"}`, `keys "command" and "Command" differ only in case`},
		{"repeated key", "terminal", `{"command":"ls","command":"rm -rf ./victim"}`, `duplicate key "command"`},
		{"not an object", "write_file", `[1,2]`, "not a valid JSON object"},
		{"clarify without question", "clarify", `{"choices":["a"]}`, "not what its schema asks for"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := &models.Message{ID: 7, Role: "assistant"}
			msg.ToolCalls = []models.ToolCall{{ID: "c1", Type: "function"}}
			msg.ToolCalls[0].Function.Name = tt.tool
			msg.ToolCalls[0].Function.Arguments = tt.args
			res := DescribeReplyIn(msg, []string{"terminal", "write_file", "clarify"}, approval.Where{})
			if len(res.ToolCalls) != 1 || res.ToolCalls[0].Args != loop.ArgsInvalid {
				t.Fatalf("described as %+v, want invalid arguments", res.ToolCalls)
			}
			if res.ToolCalls[0].Command != "" {
				t.Errorf("approval was given a command to assess: %q", res.ToolCalls[0].Command)
			}
			rows, summary := ComposeResults(turnapi.ExecuteToolsInput{SessionID: "s", TurnID: "t"}, msg.ToolCalls,
				turnapi.PlanByID([]turnapi.CallPlan{{ID: "c1", Action: turnapi.PlanInvalidArgs}}), nil, nil)
			if summary.Failed != 1 || len(rows) != 1 {
				t.Fatalf("rows %+v summary %+v", rows, summary)
			}
			got := rows[0].Content
			if !strings.HasPrefix(got, "Error: the arguments of this "+tt.tool+" call are") || !strings.Contains(got, tt.has) || rows[0].ToolCallID != "c1" {
				t.Errorf("the model reads %q, want it to mention %q", got, tt.has)
			}
		})
	}
}
