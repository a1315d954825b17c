package compress

import (
	"fmt"
	"math"
	"testing"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	tc := models.Message{Role: "assistant", Content: "ab", Reasoning: "cd",
		ToolCalls: []models.ToolCall{{ID: "x", Function: models.FunctionCall{Name: "read", Arguments: `{"p":1}`}}}}
	tests := []struct {
		name   string
		msgs   []models.Message
		schema int
		want   int
	}{
		{"empty", nil, 0, 0},
		{"one char rounds up", []models.Message{user("a")}, 0, 1},
		{"four chars", []models.Message{user("abcd")}, 0, 1},
		{"five chars", []models.Message{user("abcde")}, 0, 2},
		{"schema only", nil, 400, 100},
		{"negative schema ignored", []models.Message{user("abcd")}, -50, 1},
		// 2 content + 2 reasoning + 4 name + 7 args = 15 -> 4
		{"reasoning and tool calls", []models.Message{tc}, 0, 4},
		{"summed across messages", []models.Message{user("ab"), user("ab")}, 0, 1},
		{"runes not bytes", []models.Message{user("éééé")}, 0, 1},
		{"schema plus messages", []models.Message{user("abcd")}, 4, 2},
		{"a picture is a fixed estimate", []models.Message{withImages(user("abcd"), 1)}, 0, 1 + turnapi.ImageTokens},
		{"pictures summed across messages", []models.Message{withImages(user(""), 2), withImages(user(""), 3)}, 0, 5 * turnapi.ImageTokens},
		{"no more pictures than a call sends", []models.Message{withImages(user(""), 5), withImages(user(""), 7)}, 0,
			turnapi.MaxShownImages * turnapi.ImageTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := EstimateTokens(tt.msgs, tt.schema); got != tt.want {
				t.Errorf("EstimateTokens = %d, want %d", got, tt.want)
			}
		})
	}
}

// withImages is m with n pictures.
func withImages(m models.Message, n int) models.Message {
	for i := range n {
		m.Images = append(m.Images, turnapi.Image{ID: fmt.Sprint(i), MIME: "image/png"})
	}
	return m
}

func TestThreshold(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		window, out int
		ratio       float64
		want        int
	}{
		{"all defaults", 0, 0, 0, int(0.5 * float64(128000-4096))},
		{"negative defaults", -1, -1, -1, int(0.5 * float64(128000-4096))},
		{"explicit", 200000, 8000, 0.75, 144000},
		{"default ratio", 10000, 2000, 0, 4000},
		{"default output", 10000, 0, 0.5, (10000 - 4096) / 2},
		{"ratio clamped", 10000, 2000, 5, 8000},
		{"NaN ratio", 10000, 2000, math.NaN(), 4000},
		{"output exceeds window", 4000, 8000, 0.5, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Threshold(tt.window, tt.out, tt.ratio); got != tt.want {
				t.Errorf("Threshold = %d, want %d", got, tt.want)
			}
		})
	}
}
