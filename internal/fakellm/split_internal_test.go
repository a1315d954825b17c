package fakellm

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		text      string
		chunkSize int
		want      []string
	}{
		{"empty", "", 0, nil},
		{"one word", "hello", 0, []string{"hello"}},
		{"words", "Hello there,  world", 0, []string{"Hello", " there,", "  world"}},
		{"leading and trailing space", " a b\n", 0, []string{" a", " b", "\n"}},
		{"runes", "größe✓", 2, []string{"gr", "öß", "e✓"}},
		{"runes uneven", "abcde", 2, []string{"ab", "cd", "e"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := splitText(tc.text, tc.chunkSize)
			if !slices.Equal(got, tc.want) {
				t.Errorf("splitText(%q, %d) = %q, want %q", tc.text, tc.chunkSize, got, tc.want)
			}
			if strings.Join(got, "") != tc.text {
				t.Errorf("pieces do not join back to %q", tc.text)
			}
		})
	}
}

func TestSplitArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args      string
		chunkSize int
		want      []string
	}{
		{"{}", 0, []string{"{", "}"}},
		{`{"a":1}`, 0, []string{`{"a`, `":1`, `}`}},
		{`{"path":"x.txt"}`, 0, []string{`{"path`, `":"x.t`, `xt"}`}},
		{`{"a":1}`, 4, []string{`{"a"`, `:1}`}},
	}
	for _, tc := range tests {
		got := splitArguments(tc.args, tc.chunkSize)
		if !slices.Equal(got, tc.want) {
			t.Errorf("splitArguments(%q, %d) = %q, want %q", tc.args, tc.chunkSize, got, tc.want)
		}
	}
}

func TestUsageFor(t *testing.T) {
	t.Parallel()
	raw := []byte(strings.Repeat("x", 40))
	tests := []struct {
		name                     string
		step                     Step
		prompt, completion, reas int
	}{
		{"text", Step{Text: "12345678"}, 10, 2, 0},
		{"reasoning", Step{Text: "1234", Reasoning: "12345678"}, 10, 3, 2},
		{"empty output", Step{}, 10, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := usageFor(raw, tc.step, nil)
			if u.PromptTokens != tc.prompt || u.CompletionTokens != tc.completion || u.TotalTokens != tc.prompt+tc.completion {
				t.Errorf("usage %+v", u)
			}
			if u.CompletionTokensDetails == nil || u.CompletionTokensDetails.ReasoningTokens != tc.reas {
				t.Errorf("reasoning tokens %+v, want %d", u.CompletionTokensDetails, tc.reas)
			}
		})
	}
}
