package compress

import (
	"strings"
	"testing"
)

// sectionBody extracts the body of section name from a normalized summary.
func sectionBody(t *testing.T, s, name string) string {
	t.Helper()
	i := strings.Index(s, "## "+name+"\n")
	if i < 0 {
		t.Fatalf("section %q missing", name)
	}
	rest := s[i+len("## "+name+"\n"):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(rest)
}

func checkOrder(t *testing.T, s string) {
	t.Helper()
	if !strings.HasPrefix(s, SummaryHeader) {
		t.Fatalf("does not start with header: %q", s)
	}
	last := 0
	for _, name := range Sections {
		i := strings.Index(s[last:], "## "+name+"\n")
		if i < 0 {
			t.Fatalf("section %q missing or out of order", name)
		}
		last += i
		if strings.Count(s, "## "+name+"\n") != 1 {
			t.Fatalf("section %q repeated", name)
		}
	}
}

func TestNormalizeSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reply  string
		ok     bool
		bodies map[string]string
	}{
		{"empty", "", false, nil},
		{"blank", " \n\t ", false, nil},
		{"no header no sections", "just some text", true,
			map[string]string{"Goal": "(none)", "Critical Context": "(none)"}},
		{"missing sections filled", SummaryHeader + "\n## Goal\nship it\n## Blocked\n- CI red", true,
			map[string]string{"Goal": "ship it", "Blocked": "- CI red", "Active Task": "(none)", "Pending Asks": "(none)"}},
		{"out of order reordered", "## Remaining Work\nlast\n## Active Task\nfirst", true,
			map[string]string{"Active Task": "first", "Remaining Work": "last"}},
		{"preamble dropped and fences stripped", "```markdown\nSure! Here it is:\n" + SummaryHeader + "\n### goal:\nwin\n```", true,
			map[string]string{"Goal": "win"}},
		{"empty section gets none", SummaryHeader + "\n## Goal\n\n## Blocked\nx", true,
			map[string]string{"Goal": "(none)", "Blocked": "x"}},
		{"subheadings kept in body", SummaryHeader + "\n## Relevant Files\n### main.go\nentry point", true,
			map[string]string{"Relevant Files": "### main.go\nentry point"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := NormalizeSummary(tt.reply)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				if got != "" {
					t.Errorf("got %q with ok=false", got)
				}
				return
			}
			checkOrder(t, got)
			for name, want := range tt.bodies {
				if b := sectionBody(t, got, name); b != want {
					t.Errorf("section %q = %q, want %q", name, b, want)
				}
			}
			again, _ := NormalizeSummary(got)
			if again != got {
				t.Errorf("not idempotent:\n%s\n---\n%s", got, again)
			}
		})
	}
}
