package prompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixedNow is the time every test builds with: a Sunday.
var fixedNow = time.Date(2026, 11, 29, 23, 30, 0, 0, time.UTC)

// writeFiles creates files under root from a map of slash paths to
// contents. A path ending in "/" creates a directory.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if strings.HasSuffix(rel, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// section returns the text of the named section and whether it is there.
func section(p Prompt, name string) (string, bool) {
	for _, s := range p.Sections {
		if s.Name == name {
			return s.Text, true
		}
	}
	return "", false
}

// sectionNames lists the sections of p in order.
func sectionNames(p Prompt) []string {
	names := make([]string, len(p.Sections))
	for i, s := range p.Sections {
		names[i] = s.Name
	}
	return names
}

// entriesOfSize returns n entries of exactly size characters each.
func entriesOfSize(n, size int, letter string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Repeat(letter, size)
	}
	return out
}

// fixedZone is a zone in which fixedNow is already the next day.
func fixedZone(t *testing.T) *time.Location {
	t.Helper()
	return time.FixedZone("UTC+10", 10*3600)
}
