package compress

import (
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

func TestSummaryRequest(t *testing.T) {
	t.Parallel()
	middle := []models.Message{
		user("please fix the build"),
		{Role: "assistant", Content: "looking", ToolCalls: []models.ToolCall{{ID: "1", Function: models.FunctionCall{Name: "terminal", Arguments: `{"cmd":"go build"}`}}}},
		{Role: "tool", Name: "terminal", ToolCallID: "1", Content: "ok"},
		user(strings.Repeat("z", 5000)),
	}
	tests := []struct {
		name     string
		middle   []models.Message
		previous string
		contains []string
		absent   []string
	}{
		{"transcript without previous", middle, "",
			[]string{"user: please fix the build", "assistant: looking", `-> terminal({"cmd":"go build"})`, "tool (terminal): ok", "chars clipped]", SummaryHeader},
			[]string{previousMarker, "UPDATE", strings.Repeat("z", 2001)}},
		{"with previous", middle, SummaryHeader + "\n## Active Task\nold task",
			[]string{previousMarker, "UPDATE", "old task", "user: please fix the build"}, nil},
		{"blank previous ignored", middle, "  \n", nil, []string{previousMarker}},
		{"empty middle", nil, "", []string{"(no messages)"}, nil},
		{"pictures are named", []models.Message{{Role: "user", Content: "what is this?", Images: []turnapi.Image{{ID: "ab", Path: "uploads/ab/photo.jpg"}}},
			{Role: "user", Images: []turnapi.Image{{URL: "https://example.com/cat.png"}}}}, "",
			[]string{"user: what is this?\n[picture: uploads/ab/photo.jpg]", "user: [picture: https://example.com/cat.png]"}, []string{"(empty)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := SummaryRequest(tt.middle, tt.previous)
			for _, c := range tt.contains {
				if !strings.Contains(got, c) {
					t.Errorf("request lacks %q", c)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(got, a) {
					t.Errorf("request unexpectedly contains %q", a)
				}
			}
			last := strings.Index(got, SummaryHeader+"\n")
			if last < 0 {
				t.Fatal("no format header")
			}
			for _, s := range Sections {
				i := strings.Index(got[last:], "## "+s+"\n")
				if i < 0 {
					t.Fatalf("section %q missing or out of order", s)
				}
				last += i
			}
		})
	}
}

func TestPreviousSummary(t *testing.T) {
	t.Parallel()
	s1 := SummaryHeader + "\n## Goal\nfirst"
	s2 := "\n " + SummaryHeader + "\n## Goal\nsecond"
	tests := []struct {
		name string
		msgs []models.Message
		want string
	}{
		{"none", []models.Message{user("hi"), assistant("hello")}, ""},
		{"empty", nil, ""},
		{"one", []models.Message{user("hi"), user(s1), assistant("x")}, s1},
		{"latest wins", []models.Message{user(s1), assistant("x"), user(s2)}, s2},
		{"header mid-content ignored", []models.Message{user("quote: " + SummaryHeader)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := PreviousSummary(tt.msgs); got != tt.want {
				t.Errorf("PreviousSummary = %q, want %q", got, tt.want)
			}
		})
	}
}
