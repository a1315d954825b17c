package prompt

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPromptSplitEntries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want []string
	}{
		{name: "empty", text: "", want: nil},
		{name: "one entry", text: "  just one  \n", want: []string{"just one"}},
		{name: "separated", text: "a\n§\nb\n§\nc\n", want: []string{"a", "b", "c"}},
		{name: "empty entries dropped", text: "§\n\n§\na\n§\n  \n§\n", want: []string{"a"}},
		{name: "multi-line entry kept", text: "line 1\nline 2\n§\nb", want: []string{"line 1\nline 2", "b"}},
		{name: "section sign inside a line is text", text: "see § 4\n§\nb", want: []string{"see § 4", "b"}},
		{name: "separator with blanks and CRLF", text: "a\r\n  §  \r\nb\r\n", want: []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := SplitEntries(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("SplitEntries = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPromptFormatEntriesRoundTrip(t *testing.T) {
	t.Parallel()
	for _, entries := range [][]string{nil, {"a"}, {"a", "b\nc", "d"}} {
		text := FormatEntries(entries)
		if got := SplitEntries(text); !slices.Equal(got, entries) {
			t.Errorf("SplitEntries(FormatEntries(%q)) = %q", entries, got)
		}
		if EntriesSize(entries) != len([]rune(text)) {
			t.Errorf("EntriesSize(%q) = %d, want %d", entries, EntriesSize(entries), len([]rune(text)))
		}
	}
	if got := FormatEntries([]string{"a", "b"}); got != "a\n§\nb\n" {
		t.Errorf("FormatEntries = %q", got)
	}
}

func TestPromptFitEntries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		entries     []string
		limit       int
		wantKept    int
		wantOmitted int
	}{
		{name: "none", limit: 10},
		{name: "all fit", entries: []string{"aaa", "bbb"}, limit: 100, wantKept: 2},
		// "aaa\n§\nbbb\n" is 10 characters.
		{name: "exactly at the limit", entries: []string{"aaa", "bbb"}, limit: 10, wantKept: 2},
		{name: "one over", entries: []string{"aaa", "bbb"}, limit: 9, wantKept: 1, wantOmitted: 1},
		{name: "first does not fit", entries: []string{"aaaaaaaaaa", "b"}, limit: 5, wantKept: 0, wantOmitted: 2},
		{name: "stops at the first misfit", entries: []string{"a", "bbbbbbbbbb", "c"}, limit: 8, wantKept: 1, wantOmitted: 2},
		{name: "counts characters not bytes", entries: []string{"ééé", "ééé"}, limit: 10, wantKept: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			kept, omitted := FitEntries(tt.entries, tt.limit)
			if len(kept) != tt.wantKept || omitted != tt.wantOmitted {
				t.Errorf("FitEntries kept %d, omitted %d; want %d, %d", len(kept), omitted, tt.wantKept, tt.wantOmitted)
			}
		})
	}
}

func TestBuildMemoryCaps(t *testing.T) {
	t.Parallel()
	// Entries of 100 characters take 103 each in the file ("\n§\n" or "\n").
	tests := []struct {
		name       string
		memory     []string
		user       []string
		wantBullet map[string]int // heading -> bullets shown
		wantNote   []string
		noNote     bool
	}{
		{name: "under both caps", memory: entriesOfSize(3, 100, "m"), user: entriesOfSize(2, 100, "u"),
			wantBullet: map[string]int{"## Memory (your notes)": 3, "## About the user": 2}, noNote: true},
		{name: "memory exactly at cap", memory: append(entriesOfSize(20, 100, "m"), strings.Repeat("m", MemoryCap-20*103-1)),
			wantBullet: map[string]int{"## Memory (your notes)": 21}, noNote: true},
		{name: "memory over cap keeps whole entries", memory: entriesOfSize(25, 100, "m"),
			wantBullet: map[string]int{"## Memory (your notes)": 21},
			wantNote:   []string{"(4 entries were left out because memory is over its limit of 2200 characters"}},
		{name: "user over cap by one entry", user: entriesOfSize(14, 100, "u"),
			wantBullet: map[string]int{"## About the user": 13},
			wantNote:   []string{"(1 entry was left out because memory is over its limit of 1375 characters"}},
		{name: "both over", memory: entriesOfSize(30, 100, "m"), user: entriesOfSize(20, 100, "u"),
			wantBullet: map[string]int{"## Memory (your notes)": 21, "## About the user": 13},
			wantNote:   []string{"(9 entries were left out", "(7 entries were left out"}},
		{name: "single oversized entry", memory: []string{strings.Repeat("x", MemoryCap+1)},
			wantBullet: map[string]int{"## Memory (your notes)": 0},
			wantNote:   []string{"(1 entry was left out"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			files := map[string]string{}
			if tt.memory != nil {
				files["memories/MEMORY.md"] = FormatEntries(tt.memory)
			}
			if tt.user != nil {
				files["memories/USER.md"] = FormatEntries(tt.user)
			}
			writeFiles(t, home, files)
			p, err := Build(Inputs{Home: home, Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			text, _ := section(p, SectionMemory)
			for heading, n := range tt.wantBullet {
				block := text[strings.Index(text, heading):]
				if end := strings.Index(block, "\n\n"); end >= 0 {
					block = block[:end]
				}
				bullets := 0
				for _, line := range strings.Split(block, "\n") {
					if strings.HasPrefix(line, "- ") {
						bullets++
						if len(line) < 102 {
							t.Errorf("%s: bullet cut: %d characters", heading, len(line))
						}
					}
				}
				if bullets != n {
					t.Errorf("%s: %d bullets, want %d", heading, bullets, n)
				}
			}
			for _, note := range tt.wantNote {
				if !strings.Contains(text, note) {
					t.Errorf("memory section lacks %q:\n%s", note, text)
				}
			}
			if tt.noNote && strings.Contains(text, "left out") {
				t.Errorf("unexpected omitted-count line:\n%s", text)
			}
		})
	}
}

func TestBuildMemoryHandEditedFile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	writeFiles(t, home, map[string]string{
		filepath.Join("memories", "MEMORY.md"): "\n\n  first  \n\n§\n§\nsecond\r\n§\n",
	})
	p, err := Build(Inputs{Home: home, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := section(p, SectionMemory); got != "## Memory (your notes)\n- first\n- second" {
		t.Errorf("memory = %q", got)
	}
}
