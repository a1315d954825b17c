package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/talaria-agent/talaria/internal/injection"
	"github.com/talaria-agent/talaria/internal/prompt"
)

// MemoryName is the name of the memory tool.
const MemoryName = "memory"

// Memory tool sentinel errors.
var (
	// ErrNoMemoryHome: the memory tool has no $TALARIA_HOME.
	ErrNoMemoryHome = errors.New("memory: no TALARIA_HOME configured")
	// ErrMemoryFull: the change would take a memory file over its cap.
	ErrMemoryFull = errors.New("memory is full")
	// ErrMemoryNoMatch: no entry contains old_text.
	ErrMemoryNoMatch = errors.New("no memory entry matches")
	// ErrMemoryAmbiguous: more than one entry contains old_text.
	ErrMemoryAmbiguous = errors.New("several memory entries match")
	// ErrMemoryInjection: the content looks like a prompt injection.
	ErrMemoryInjection = errors.New("memory entry refused: it looks like a prompt injection")
)

// memoryArgs are the memory tool's arguments.
type memoryArgs struct {
	Action  string `json:"action" jsonschema:"add (a new entry), replace (an entry) or remove (one)."`
	Target  string `json:"target" jsonschema:"memory (your notes) or user (facts about the user)."`
	Content string `json:"content,omitempty" jsonschema:"The entry's text, for add and replace."`
	OldText string `json:"old_text,omitempty" jsonschema:"A whole existing entry, or text contained in exactly one entry, for replace and remove."`
}

// Memory is the memory tool over home, $TALARIA_HOME; the files live in
// home/memories. Changes are read-modify-write under an exclusive flock on
// a lock file next to the memory file, and written atomically, so several
// workers on one machine can share a home. Adding twice adds two entries:
// it is not idempotent.
func Memory(home string) Tool {
	return Define(Spec[memoryArgs]{
		Name: MemoryName,
		Description: `Keep lasting memory across sessions. It is shown in the system prompt of every new session. ` +
			`target "memory" holds your own notes (facts about the environment, conventions, lessons learned; at most 2200 characters); ` +
			`target "user" holds facts about the user (preferences, role, how they like to work; at most 1375 characters). ` +
			`action "add" appends "content" as a new entry; "replace" replaces the one entry containing "old_text" with "content"; ` +
			`"remove" deletes the one entry containing "old_text". An entry equal to old_text is chosen first; otherwise old_text must be contained in exactly one entry. ` +
			`Save only what will matter later, one short fact per entry. When memory is full, consolidate or remove entries first. ` +
			`The result is JSON: {"target","entries","chars","cap"}.`,
		Meta: Meta{
			Toolset:      "recall",
			Guidance:     "Save lasting facts with memory (target \"memory\" for your notes, \"user\" for facts about the user); keep entries short, and consolidate when memory is full.",
			GuidanceRank: 90,
			Approval:     "entries scanned",
		},
		Quick: true, // one locked file update
		Run:   func(ctx context.Context, _ Env, a memoryArgs) (string, error) { return runMemory(ctx, home, a) },
	})
}

// memoryResult is the memory tool's result.
type memoryResult struct {
	Target  string `json:"target"`
	Entries int    `json:"entries"`
	Chars   int    `json:"chars"`
	Cap     int    `json:"cap"`
}

// memoryRequest is a validated memory call.
type memoryRequest struct {
	action, target, content, oldText string
}

// memoryLockPoll is how often a waiting call retries the lock.
const memoryLockPoll = 5 * time.Millisecond

// runMemory makes one change to a memory file under home.
func runMemory(ctx context.Context, home string, a memoryArgs) (string, error) {
	req, err := checkMemoryArgs(a)
	if err != nil {
		return "", err
	}
	if home == "" {
		return "", ErrNoMemoryHome
	}
	file, limit := memoryTarget(req.target)
	dir := filepath.Join(home, prompt.MemoryDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("memory: create %s: %w", dir, err)
	}
	path := filepath.Join(dir, file)
	unlock, err := lockExclusive(ctx, path+".lock")
	if err != nil {
		return "", fmt.Errorf("memory: lock %s: %w", path, err)
	}
	defer unlock()

	data, err := readRegularFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("memory: read %s: %w", path, err)
	}
	entries := prompt.SplitEntries(string(data))
	next, err := applyMemory(entries, req, limit)
	if err != nil {
		return "", fmt.Errorf("memory %s: %w", file, err)
	}
	text := prompt.FormatEntries(next)
	if err := writeAtomic(path, []byte(text)); err != nil {
		return "", fmt.Errorf("memory: write %s: %w", path, err)
	}
	// What the agent remembers about its user is for its owner only.
	if err := os.Chmod(path, 0o600); err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}
	return marshalResult(memoryResult{Target: req.target, Entries: len(next), Chars: prompt.EntriesSize(next), Cap: limit})
}

// memoryTarget names a target's file and cap.
func memoryTarget(target string) (file string, limit int) {
	if target == "user" {
		return prompt.UserFile, prompt.UserCap
	}
	return prompt.MemoryFile, prompt.MemoryCap
}

// checkMemoryArgs validates the arguments.
func checkMemoryArgs(a memoryArgs) (memoryRequest, error) {
	r := memoryRequest{action: strings.ToLower(strings.TrimSpace(a.Action)), target: strings.ToLower(strings.TrimSpace(a.Target)),
		content: strings.TrimSpace(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(a.Content)), oldText: strings.TrimSpace(a.OldText)}

	switch r.action {
	case "add", "replace", "remove":
	default:
		return r, invalidArgs(MemoryName, `"action" must be add, replace or remove, got %q`, r.action)
	}
	if r.target != "memory" && r.target != "user" {
		return r, invalidArgs(MemoryName, `"target" must be memory or user, got %q`, r.target)
	}
	if r.action != "remove" {
		if r.content == "" {
			return r, invalidArgs(MemoryName, `"content" is required for %s and must not be empty`, r.action)
		}
		for _, line := range strings.Split(r.content, "\n") {
			if prompt.IsSeparatorLine(line) {
				return r, invalidArgs(MemoryName, `"content" must not contain a line holding only "§" (it separates entries); add one entry per call`)
			}
		}
	}
	if r.action != "add" && r.oldText == "" {
		return r, invalidArgs(MemoryName, `"old_text" is required for %s and must not be empty`, r.action)
	}
	if r.action != "remove" {
		if err := screenMemoryContent(r.content); err != nil {
			return r, err
		}
	}
	return r, nil
}

// screenMemoryContent refuses content that looks like a prompt injection:
// memory is loaded into the system prompt of every new session.
func screenMemoryContent(content string) error {
	findings := injection.Scan(content)
	if len(findings) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s. Memory is loaded into the system prompt of every session, so an entry must be a plain fact "+
		"without hidden text, instructions to ignore or override rules, or commands that send secrets; nothing was changed",
		ErrMemoryInjection, injection.Details(findings))
}

// applyMemory returns the entries after the change. A change that takes
// the file over limit is refused, unless it makes an already oversized
// file smaller (so an oversized file can always be repaired).
func applyMemory(entries []string, r memoryRequest, limit int) ([]string, error) {
	var next []string
	switch r.action {
	case "add":
		next = append(append([]string(nil), entries...), r.content)
	default:
		i, err := matchEntry(entries, r.oldText)
		if err != nil {
			return nil, err
		}
		next = append([]string(nil), entries[:i]...)
		if r.action == "replace" {
			next = append(next, r.content)
		}
		next = append(next, entries[i+1:]...)
	}
	before, after := prompt.EntriesSize(entries), prompt.EntriesSize(next)
	if after > limit && after > before {
		return nil, fmt.Errorf("%w: it holds %d of %d characters and the new entry has %d, which would make %d; "+
			"consolidate or remove entries first (action replace or remove), then try again; nothing was changed",
			ErrMemoryFull, before, limit, len([]rune(r.content)), after)
	}
	return next, nil
}

// matchEntry finds the entry old names: an entry equal to old (whitespace
// around either ignored) first, else the one entry containing old. Entries
// that are all the same text count as one: removing or replacing any of them
// has the same result, so the first is taken. An entry contained in a longer
// one stays reachable by its full text ("test" beside "tests pass").
func matchEntry(entries []string, old string) (int, error) {
	var exact, hits []int
	for i, e := range entries {
		if strings.TrimSpace(e) == old {
			exact = append(exact, i)
		}
		if strings.Contains(e, old) {
			hits = append(hits, i)
		}
	}
	if len(exact) > 0 {
		return exact[0], nil // all equal to old, so all the same text
	}
	switch {
	case len(hits) == 0:
		return 0, fmt.Errorf("%w %q (0 of %d entries contain it); nothing was changed", ErrMemoryNoMatch, old, len(entries))
	case sameText(entries, hits):
		return hits[0], nil
	}
	previews := make([]string, len(hits))
	for k, i := range hits {
		previews[k] = snippet([]byte(entries[i]))
	}
	return 0, fmt.Errorf("%w %q: %d entries contain it (%s); give old_text that matches only one, or a whole entry; nothing was changed",
		ErrMemoryAmbiguous, old, len(hits), strings.Join(previews, ", "))
}

// sameText reports whether the entries at idx all hold the same text.
func sameText(entries []string, idx []int) bool {
	for _, i := range idx[1:] {
		if entries[i] != entries[idx[0]] {
			return false
		}
	}
	return true
}

// lockExclusive takes an exclusive flock on path (created if needed),
// waiting until it is free or ctx is done. unlock releases it.
func lockExclusive(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing the descriptor drops the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("flock: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("%w: waiting for the lock: %w", ErrCancelled, ctx.Err())
		case <-time.After(memoryLockPoll):
		}
	}
}

// memory is a built-in tool.
var _ = builtin(func(s Services) Tool { return Memory(s.Home) })
