package compress

import (
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/models"
)

func TestPrune(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 5000)
	tests := []struct {
		name string
		in   models.Message
		max  int
		want string
	}{
		{"small tool output kept", models.Message{Role: "tool", Content: "ok"}, 100, "ok"},
		{"large tool output pruned", models.Message{Role: "tool", Content: big}, 1000,
			strings.Repeat("x", 200) + "\n[... 4800 characters of tool output pruned ...]"},
		{"default max", models.Message{Role: "tool", Content: big}, 0,
			strings.Repeat("x", 200) + "\n[... 4800 characters of tool output pruned ...]"},
		{"at max kept", models.Message{Role: "tool", Content: big}, 5000, big},
		{"non-tool untouched", models.Message{Role: "user", Content: big}, 10, big},
		{"assistant untouched", models.Message{Role: "assistant", Content: big}, 10, big},
		{"not shortened kept", models.Message{Role: "tool", Content: strings.Repeat("y", 230)}, 10, strings.Repeat("y", 230)},
		{"runes", models.Message{Role: "tool", Content: strings.Repeat("é", 300)}, 250,
			strings.Repeat("é", 200) + "\n[... 100 characters of tool output pruned ...]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := []models.Message{tt.in}
			out := Prune(in, tt.max)
			if len(out) != 1 || out[0].Content != tt.want {
				t.Errorf("Prune content = %q, want %q", out[0].Content, tt.want)
			}
			if in[0].Content != tt.in.Content {
				t.Error("Prune modified its input")
			}
		})
	}
	if Prune(nil, 10) != nil {
		t.Error("Prune(nil) != nil")
	}
}
