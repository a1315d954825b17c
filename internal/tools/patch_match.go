package tools

import (
	"fmt"
	"strings"

	"github.com/talaria-agent/talaria/internal/editdistance"
)

// span is a byte range [start, end) of a file's content.
type span struct{ start, end int }

// Match strategies, tried in order until one finds old_string.
const (
	matchExact      = "exact"
	matchTrimmed    = "lines trimmed"
	matchWhitespace = "whitespace collapsed"
)

// findMatches returns where old occurs in content, by the first strategy
// that finds it: exactly; then line by line with each line's leading and
// trailing whitespace ignored; then with every run of whitespace taken as
// one space. The line strategies match whole lines and never overlap.
// Pure.
func findMatches(content, old string) ([]span, string) {
	if old == "" {
		return nil, ""
	}
	if spans := exactMatches(content, old); len(spans) > 0 {
		return spans, matchExact
	}
	for _, s := range []struct {
		name string
		norm func(string) string
	}{{matchTrimmed, strings.TrimSpace}, {matchWhitespace, collapseSpace}} {
		if spans := lineMatches(content, old, s.norm); len(spans) > 0 {
			return spans, s.name
		}
	}
	return nil, ""
}

func exactMatches(content, old string) []span {
	var out []span
	for from := 0; ; {
		i := strings.Index(content[from:], old)
		if i < 0 {
			return out
		}
		out = append(out, span{from + i, from + i + len(old)})
		from += i + len(old)
	}
}

// collapseSpace trims s and turns each run of whitespace into one space.
// Pure.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// line is one line of a file: its text without the line ending, and where
// it starts and ends (the ending included) in the content.
type line struct {
	text       string
	start, end int
}

// splitLines cuts content into lines; a last line without a newline
// counts. Pure.
func splitLines(content string) []line {
	var out []line
	for start := 0; start < len(content); {
		end := strings.IndexByte(content[start:], '\n')
		next := len(content)
		if end >= 0 {
			next = start + end + 1
		}
		text := strings.TrimSuffix(strings.TrimSuffix(content[start:next], "\n"), "\r")
		out = append(out, line{text: text, start: start, end: next})
		start = next
	}
	return out
}

// oldLines are old_string's lines for the line strategies: a final line
// ending does not add an empty line.
func oldLines(old string) []string {
	lines := strings.Split(strings.TrimSuffix(strings.ReplaceAll(old, "\r\n", "\n"), "\n"), "\n")
	return lines
}

// lineMatches finds the runs of whole lines equal to old's lines once
// normalised by norm. A span ends where old does: after the last line's
// ending only when old ends with a newline. Pure.
func lineMatches(content, old string, norm func(string) string) []span {
	want := oldLines(old)
	for i := range want {
		want[i] = norm(want[i])
	}
	if strings.Join(want, "") == "" {
		return nil // only whitespace: it would match anywhere
	}
	lines := splitLines(content)
	var out []span
	for i := 0; i+len(want) <= len(lines); {
		ok := true
		for k := range want {
			if norm(lines[i+k].text) != want[k] {
				ok = false
				break
			}
		}
		if !ok {
			i++
			continue
		}
		last := lines[i+len(want)-1]
		end := last.start + len(last.text)
		if strings.HasSuffix(old, "\n") {
			end = last.end
		}
		out = append(out, span{lines[i].start, end})
		i += len(want)
	}
	return out
}

// lineNumber is the 1-based line of content at byte offset. Pure.
func lineNumber(content string, offset int) int {
	return strings.Count(content[:offset], "\n") + 1
}

// maxSuggestLines bounds the file lines searched for a closest match.
const maxSuggestLines = 20000

// closestMatch shows the lines of content most like old, numbered as
// read_file numbers them, for an old_string that was not found; "" when
// nothing is alike. Pure.
func closestMatch(content, old string) string {
	want := oldLines(old)
	lines := splitLines(content)
	if len(lines) == 0 || len(lines) > maxSuggestLines {
		return ""
	}
	n := min(len(want), len(lines))
	best, bestScore := -1, 0
	for i := 0; i+n <= len(lines); i++ {
		score := 0
		for k := range n {
			score += similarity(strings.TrimSpace(lines[i+k].text), strings.TrimSpace(want[k]))
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	// Under half alike on average: no suggestion beats a misleading one.
	if best < 0 || bestScore*2 < n*100 {
		return ""
	}
	var b strings.Builder
	for k := range n {
		fmt.Fprintf(&b, "%6d|%s\n", best+k+1, clipLine(lines[best+k].text))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// similarity is how alike two lines are, 0 to 100, by edit distance over
// their first 200 characters. Pure.
func similarity(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	ra, rb = ra[:min(len(ra), 200)], rb[:min(len(rb), 200)]
	longest := max(len(ra), len(rb))
	if longest == 0 {
		return 100
	}
	if abs(len(ra)-len(rb))*2 > longest {
		return 0 // too different in length to be worth measuring
	}
	return 100 - editdistance.Runes(ra, rb)*100/longest
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// clipLine cuts a suggestion's line to a readable length.
func clipLine(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return s
}
