package compress

import (
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/models"
)

func TestFallbackSummary(t *testing.T) {
	t.Parallel()
	withTools := []models.Message{
		call("a"),
		{Role: "assistant", ToolCalls: []models.ToolCall{
			{ID: "b", Function: models.FunctionCall{Name: "fn_a"}},
			{ID: "c", Function: models.FunctionCall{Name: "write"}},
		}},
	}
	tests := []struct {
		name          string
		head, middle  []models.Message
		task, actions string
	}{
		{"task from head", []models.Message{sys("s"), user("refactor the parser")}, withTools,
			"refactor the parser", "- fn_a (2 calls)\n- write (1 call)"},
		{"task from middle when head has none", []models.Message{sys("s")}, []models.Message{assistant("x"), user("deploy v2")},
			"deploy v2", "(none)"},
		{"previous summary skipped", []models.Message{user(SummaryHeader + "\nold"), user("real task")}, nil,
			"real task", "(none)"},
		{"no user message", nil, nil, "(unknown: no user message in the compacted range)", "(none)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := FallbackSummary(tt.head, tt.middle)
			checkOrder(t, got)
			if b := sectionBody(t, got, "Active Task"); b != tt.task {
				t.Errorf("Active Task = %q, want %q", b, tt.task)
			}
			if b := sectionBody(t, got, "Goal"); b != tt.task {
				t.Errorf("Goal = %q, want %q", b, tt.task)
			}
			if b := sectionBody(t, got, "Completed Actions"); b != tt.actions {
				t.Errorf("Completed Actions = %q, want %q", b, tt.actions)
			}
			if norm, ok := NormalizeSummary(got); !ok || norm != got {
				t.Errorf("fallback is not in normalized form")
			}
		})
	}
}

func TestFallbackSummaryClipsTask(t *testing.T) {
	t.Parallel()
	got := FallbackSummary([]models.Message{user(strings.Repeat("q", 10000))}, nil)
	if len(got) > 6000 {
		t.Errorf("task not clipped: %d bytes", len(got))
	}
}
