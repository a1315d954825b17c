package prompt

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/talaria-agent/talaria/internal/injection"
)

// Memory caps, in characters of the file as the memory tool writes it
// (see FormatEntries).
const (
	MemoryCap = 2200 // MEMORY.md: the agent's own notes
	UserCap   = 1375 // USER.md: facts about the user
)

// Memory files, under $TALARIA_HOME/memories.
const (
	MemoryDir  = "memories"
	MemoryFile = "MEMORY.md"
	UserFile   = "USER.md"
)

// EntrySeparator separates entries in a memory file: a line containing
// only "§".
const EntrySeparator = "\n§\n"

// SplitEntries splits a memory file into its entries: the pieces between
// lines that contain only "§" (surrounding blanks allowed), trimmed, with
// empty ones dropped.
func SplitEntries(text string) []string {
	var entries []string
	var cur []string
	flush := func() {
		if e := strings.TrimSpace(strings.Join(cur, "\n")); e != "" {
			entries = append(entries, e)
		}
		cur = cur[:0]
	}
	for _, line := range strings.Split(cleanText(text), "\n") {
		if IsSeparatorLine(line) {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return entries
}

// IsSeparatorLine reports whether line separates memory entries.
func IsSeparatorLine(line string) bool {
	return strings.TrimSpace(line) == "§"
}

// FormatEntries renders entries as a memory file: joined by
// EntrySeparator and ended by a newline; no entries give an empty file.
// Caps are measured on this text.
func FormatEntries(entries []string) string {
	if len(entries) == 0 {
		return ""
	}
	return strings.Join(entries, EntrySeparator) + "\n"
}

// EntriesSize is the size in characters of FormatEntries(entries).
func EntriesSize(entries []string) int {
	return charCount(FormatEntries(entries))
}

// FitEntries keeps whole entries from the start while they fit in limit
// characters (measured as EntriesSize) and returns them with the number
// left out. It stops at the first entry that does not fit.
func FitEntries(entries []string, limit int) (kept []string, omitted int) {
	for i := range entries {
		if EntriesSize(entries[:i+1]) > limit {
			return entries[:i], len(entries) - i
		}
	}
	return entries, 0
}

// memorySection renders MEMORY.md and USER.md. Entries that look like a
// prompt injection are left out (and returned as refusals), before the
// caps are applied. A memory file that exists but cannot be read is left
// out with one line saying so, and returned as unread.
func memorySection(home string) (string, []Refusal, []Unread) {
	if home == "" {
		return "", nil, nil
	}
	dir := filepath.Join(home, MemoryDir)
	blocks := []struct {
		file, title string
		limit       int
	}{
		{MemoryFile, "## Memory (your notes)", MemoryCap},
		{UserFile, "## About the user", UserCap},
	}
	var parts []string
	var refused []Refusal
	var unread []Unread
	for _, b := range blocks {
		path := filepath.Join(dir, b.file)
		text, _, err := readOptional(path)
		if err != nil {
			unread = append(unread, Unread{Path: path, Err: fmt.Errorf("memory: %w", err)})
			parts = append(parts, unreadNote(MemoryDir+"/"+b.file))
			continue
		}
		entries, out := screenEntries(path, SplitEntries(text))
		refused = append(refused, out...)
		if block := memoryBlock(b.title, entries, len(out), b.limit); block != "" {
			parts = append(parts, block)
		}
	}
	return strings.Join(parts, "\n\n"), refused, unread
}

// screenEntries splits entries into those that look clean and refusals
// for those that look like a prompt injection.
func screenEntries(path string, entries []string) (clean []string, refused []Refusal) {
	for i, e := range entries {
		if findings := injection.Scan(e); len(findings) > 0 {
			refused = append(refused, Refusal{Path: path, Entry: i + 1, Findings: findings})
			continue
		}
		clean = append(clean, e)
	}
	return clean, refused
}

// memoryBlock renders one memory file's entries as bullet points under a
// heading, held to limit, with a note for entries refused as prompt
// injections; "" when there is nothing to show.
func memoryBlock(title string, entries []string, refused, limit int) string {
	if len(entries) == 0 && refused == 0 {
		return ""
	}
	kept, omitted := FitEntries(entries, limit)
	var b strings.Builder
	b.WriteString(title)
	for _, e := range kept {
		b.WriteString("\n")
		b.WriteString(bullet(e))
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "\n(%s left out because memory is over its limit of %d characters; consolidate or remove entries.)",
			entriesWere(omitted), limit)
	}
	switch {
	case refused == 1:
		b.WriteString("\n(1 entry was not loaded: it looks like a prompt injection.)")
	case refused > 1:
		fmt.Fprintf(&b, "\n(%d entries were not loaded: they look like prompt injections.)", refused)
	}
	return b.String()
}

// entriesWere counts entries in words: "1 entry was", "3 entries were".
func entriesWere(n int) string {
	if n == 1 {
		return "1 entry was"
	}
	return fmt.Sprintf("%d entries were", n)
}

// bullet renders an entry as a list item, indenting its further lines.
func bullet(entry string) string {
	return "- " + strings.ReplaceAll(entry, "\n", "\n  ")
}
