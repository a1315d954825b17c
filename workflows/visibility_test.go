package workflows

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTurnSummary(t *testing.T) {
	tests := []struct {
		name string
		in   TurnInput
		want string
	}{
		{"short message", TurnInput{SessionID: "s1", TurnNumber: 3, UserMessage: "fix the build"},
			"session s1 · turn 3: fix the build"},
		{"no message", TurnInput{SessionID: "s1", TurnNumber: 1}, "session s1 · turn 1"},
		{"first twelve words", TurnInput{SessionID: "s", TurnNumber: 2,
			UserMessage: "one two three four five six seven eight nine ten eleven twelve thirteen"},
			"session s · turn 2: one two three four five six seven eight nine ten eleven twelve…"},
		{"line breaks and tabs become spaces", TurnInput{SessionID: "s", TurnNumber: 1, UserMessage: "a\n\tb\r\nc"},
			"session s · turn 1: a b c"},
		{"escape sequences are dropped", TurnInput{SessionID: "s", TurnNumber: 1, UserMessage: "\x1b[31mred\x1b[0m \u202eevil"},
			"session s · turn 1: \\[31mred \\[0m evil"},
		{"markdown is inert", TurnInput{SessionID: "s", TurnNumber: 1, UserMessage: "[click](http://x) ![i](y) <b>"},
			"session s · turn 1: \\[click\\]\\(http://x\\) \\!\\[i\\]\\(y\\) \\<b\\>"},
		{"session id is escaped too", TurnInput{SessionID: "cron.a_b.1", TurnNumber: 1, UserMessage: "hi"},
			"session cron.a\\_b.1 · turn 1: hi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := turnSummary(tt.in); got != tt.want {
				t.Errorf("turnSummary = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFirstWordsBoundsLength(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		words     int
		runes     int
		wantRunes int // at most, before escaping
		wantCut   bool
	}{
		{"one long word", strings.Repeat("x", 500), 12, 80, 81, true},
		{"multibyte runes are counted as runes", strings.Repeat("é", 100), -1, 10, 11, true},
		{"fits", "hello world", 12, 80, 11, false},
		{"empty", "   \n ", 12, 80, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := firstWords(tt.text, tt.words, tt.runes)
			if n := utf8.RuneCountInString(got); n > tt.wantRunes {
				t.Errorf("firstWords has %d runes, want at most %d: %q", n, tt.wantRunes, got)
			}
			if cut := strings.HasSuffix(got, "…"); cut != tt.wantCut {
				t.Errorf("cut marker = %v, want %v: %q", cut, tt.wantCut, got)
			}
			if !utf8.ValidString(got) {
				t.Errorf("not valid UTF-8: %q", got)
			}
		})
	}
}

func TestTurnDetails(t *testing.T) {
	tests := []struct {
		name string
		in   TurnInput
		want string
	}{
		{"with model", TurnInput{SessionID: "abc", TurnNumber: 7, Model: "gpt-4o", UserMessage: "summarise the logs"},
			"**Session:** abc\n\n**Turn:** 7\n\n**Model:** gpt-4o\n\n**Message:** summarise the logs"},
		{"worker's model, no message", TurnInput{SessionID: "abc", TurnNumber: 1},
			"**Session:** abc\n\n**Turn:** 1"},
		{"hostile message stays on its line", TurnInput{SessionID: "abc", TurnNumber: 2, UserMessage: "hi\n\n# Title\n**bold**"},
			"**Session:** abc\n\n**Turn:** 2\n\n**Message:** hi \\# Title \\*\\*bold\\*\\*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := turnDetails(tt.in); got != tt.want {
				t.Errorf("turnDetails =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestSearchAttributesAreKeywords(t *testing.T) {
	got := SearchAttributes()
	if len(got) != 2 {
		t.Fatalf("SearchAttributes = %v, want the session id and the stop reason", got)
	}
	for _, name := range []string{SearchAttrSessionID, SearchAttrStopReason} {
		if typ, ok := got[name]; !ok || typ.String() != "Keyword" {
			t.Errorf("%s: %v (registered %v), want Keyword", name, typ, ok)
		}
	}
}

// TestVisibilityFitsTemporalLimits: whatever the message, the summary and
// details stay under Temporal's payload limits once JSON-encoded (< and >
// grow to six bytes each there, and are escaped for Markdown first).
func TestVisibilityFitsTemporalLimits(t *testing.T) {
	hostile := []string{
		strings.Repeat("<", 5000),
		strings.Repeat("\\u00e9\"&", 3000),
		strings.Repeat("界", 5000),
		strings.Repeat("a ", 5000),
	}
	for _, msg := range hostile {
		in := TurnInput{SessionID: strings.Repeat("<", 300), TurnNumber: 1, Model: strings.Repeat(">", 300), UserMessage: msg}
		for _, c := range []struct {
			text string
			max  int
		}{{fitPayload(turnSummary(in), maxSummaryJSON), maxSummaryJSON}, {fitPayload(turnDetails(in), maxDetailsJSON), maxDetailsJSON}} {
			b, _ := json.Marshal(c.text)
			if len(b) > c.max || c.text == "" {
				t.Errorf("%.20q...: %d bytes as JSON, want 1..%d", msg, len(b), c.max)
			}
		}
	}
	if got := fitPayload("short", 100); got != "short" {
		t.Errorf("fitPayload cut a short text: %q", got)
	}
	if got := fitPayload("abcdef", 6); got != "a…" {
		t.Errorf("fitPayload(abcdef, 6) = %q, want a… (\"a…\" is 6 bytes as JSON)", got)
	}
}

func TestKeywordFits(t *testing.T) {
	for s, want := range map[string]bool{
		"": false, "s1": true, strings.Repeat("é", 255): true, strings.Repeat("x", 256): false,
	} {
		if got := keywordFits(s); got != want {
			t.Errorf("keywordFits(%d runes) = %v, want %v", utf8.RuneCountInString(s), got, want)
		}
	}
}
