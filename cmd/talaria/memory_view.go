package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/talaria-agent/talaria"
)

// memoryFileView is one memory file as `memory show -o json` prints it.
type memoryFileView struct {
	Kind       string            `json:"kind"` // "memory" (MEMORY.md) or "user" (USER.md)
	Title      string            `json:"title"`
	Path       string            `json:"path"`
	Characters int               `json:"characters"`
	Limit      int               `json:"limit"`
	Entries    []memoryEntryView `json:"entries"`
}

// memoryEntryView is one entry; an entry that looks like a prompt
// injection is not loaded into the system prompt, and says why.
type memoryEntryView struct {
	Text      string `json:"text"`
	Loaded    bool   `json:"loaded"`
	Injection string `json:"injection,omitempty"`
}

// readMemoryFiles reads MEMORY.md and USER.md under home (a missing file
// has no entries).
func readMemoryFiles(home string) ([]memoryFileView, error) {
	files := []memoryFileView{
		{Kind: "memory", Title: "Agent notes", Path: talaria.MemoryFile, Limit: talaria.MemoryCap},
		{Kind: "user", Title: "About the user", Path: talaria.UserFile, Limit: talaria.UserCap},
	}
	for i := range files {
		f := &files[i]
		f.Path = filepath.Join(home, talaria.MemoryDir, f.Path)
		data, err := os.ReadFile(f.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read %s: %w", f.Path, err)
		}
		f.Characters = utf8.RuneCount(data)
		f.Entries = []memoryEntryView{}
		for _, e := range talaria.SplitEntries(string(data)) {
			f.Entries = append(f.Entries, newMemoryEntryView(e))
		}
	}
	return files, nil
}

func newMemoryEntryView(entry string) memoryEntryView {
	findings := talaria.ScanInjection(entry)
	if len(findings) == 0 {
		return memoryEntryView{Text: entry, Loaded: true}
	}
	return memoryEntryView{Text: entry, Injection: talaria.InjectionSummary(findings)}
}

// printMemory prints each file's header and entries as a list.
func printMemory(w io.Writer, files []memoryFileView) {
	for _, f := range files {
		fmt.Fprintf(w, "## %s (%s): %d entries, %d/%d characters\n", f.Title, f.Path, len(f.Entries), f.Characters, f.Limit)
		for _, e := range f.Entries {
			fmt.Fprintln(w, showEntry(e.Text))
		}
		fmt.Fprintln(w)
	}
}
