package memory

import (
	"slices"
	"strings"
	"testing"
)

func TestParseExpansions(t *testing.T) {
	t.Parallel()

	long := strings.Repeat("why ", 100)
	tests := []struct {
		name, reply, message string
		want                 []string
	}{
		{"plain lines", "How do I restart a pod?\nWhy does my deployment crash?\nWhat is a CrashLoopBackOff?", "pod keeps dying",
			[]string{"How do I restart a pod?", "Why does my deployment crash?", "What is a CrashLoopBackOff?"}},
		{"numbered and quoted, with a preamble", "Here are three questions:\n1. \"How do I feed a starter?\"\n2) 'Why is my bread flat?'\n- * What flour for sourdough?",
			"bread", []string{"How do I feed a starter?", "Why is my bread flat?", "What flour for sourdough?"}},
		{"thinking, blanks, repeats and the message left out", "<think>the user asks</think>\n\nSame message\nA?\n\na?\nB?", "same message",
			[]string{"A?", "B?"}},
		{"at most three", "a1\na2\na3\na4\na5", "m", []string{"a1", "a2", "a3"}},
		{"nothing", "   \n\n", "m", nil},
		{"a long line is cut", long, "m", []string{cutText(long, maxExpansionBytes)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ParseExpansions(tt.reply, tt.message)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ParseExpansions = %q, want %q", got, tt.want)
			}
			for _, q := range got {
				if len(q) > maxExpansionBytes {
					t.Fatalf("%d bytes, bound %d", len(q), maxExpansionBytes)
				}
			}
		})
	}
}

func TestExpansionRequestBoundsTheMessage(t *testing.T) {
	t.Parallel()

	got := ExpansionRequest(strings.Repeat("x", 10*maxExpansionInput))
	if !strings.HasPrefix(got, ExpansionPrompt) || len(got) > len(ExpansionPrompt)+maxExpansionInput {
		t.Fatalf("request of %d bytes, want the prompt and at most %d bytes of the message", len(got), maxExpansionInput)
	}
}

func TestQueryWordsKeepRoomForExpansions(t *testing.T) {
	t.Parallel()

	var many []string
	for i := range 40 {
		many = append(many, strings.Repeat("z", i+2))
	}
	got := recallQueryWords(strings.Join(many, " "), []string{"kubernetes restart"})
	if len(got) != maxRecallWords-maxRecallWords/3+2 || !slices.Contains(got, "kubernetes") || !slices.Contains(got, "restart") {
		t.Fatalf("recallQueryWords = %v (%d words): the expansion's words must be searched beside a long message's", got, len(got))
	}
	if all := recallQueryWords(strings.Join(many, " "), nil); len(all) != maxRecallWords {
		t.Fatalf("without expansions the message has all %d words, got %d", maxRecallWords, len(all))
	}
}
