package activities

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestLocalOutputPath(t *testing.T) {
	tests := []struct {
		slot time.Time
		want string
	}{
		{time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), "/h/cron/output/job/2026-03-01T09-00Z.md"},    // a scheduled slot
		{time.Date(2026, 3, 1, 9, 0, 7, 0, time.UTC), "/h/cron/output/job/2026-03-01T09-00-07Z.md"}, // a run-now slot
		{time.Date(2026, 3, 1, 10, 0, 7, 0, time.FixedZone("CET", 3600)), "/h/cron/output/job/2026-03-01T09-00-07Z.md"},
	}
	for _, tt := range tests {
		if got := LocalOutputPath("/h", "job", tt.slot); got != tt.want {
			t.Errorf("LocalOutputPath(%s) = %s, want %s", tt.slot, got, tt.want)
		}
	}
}

// TestJobDirName: a job's name, whatever it holds, is one path element
// under cron/output, and different names get different directories.
func TestJobDirName(t *testing.T) {
	long := strings.Repeat("é", 80)
	tests := []struct {
		name, want string
	}{
		{"daily-report", "daily-report"},
		{"v1.2_notes", "v1.2_notes"},
		{"résumé", "résumé"},
		{"../../etc", "_._.._etc-"},
		{"a/b", "a_b-"},
		{"a_b", "a_b"},
		{"..", "_.-"},
		{".hidden", "_hidden-"},
		{"", "-"},
		{"line\nbreak", "line_break-"},
		{long, ""},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		got := jobDirName(tt.name)
		if tt.want != "" && !strings.HasPrefix(got, tt.want) {
			t.Errorf("jobDirName(%q) = %q, want prefix %q", tt.name, got, tt.want)
		}
		if got == "" || got == "." || got == ".." || strings.ContainsAny(got, "/\\\x00\n") || len(got) > maxJobDirBytes || !utf8.ValidString(got) {
			t.Errorf("jobDirName(%q) = %q is not one safe path element", tt.name, got)
		}
		if filepath.Dir(filepath.Join("/h/cron/output", got, "x.md")) != filepath.Join("/h/cron/output", got) {
			t.Errorf("jobDirName(%q) = %q leaves its directory", tt.name, got)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%q and %q share the directory %q", tt.name, other, got)
		}
		seen[got] = tt.name
	}
}
