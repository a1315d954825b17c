package injection

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Kind is the kind of marker a Finding reports.
type Kind string

// Kinds of marker.
const (
	Invisible     Kind = "invisible-unicode"
	HiddenComment Kind = "hidden-comment"
	HiddenElement Kind = "hidden-element"
	Override      Kind = "instruction-override"
	Exfiltration  Kind = "exfiltration"
)

// Reason says in a few words what a kind of marker is, for warnings and
// notes ("hidden instruction in an HTML comment").
func (k Kind) Reason() string {
	switch k {
	case Invisible:
		return "invisible Unicode characters"
	case HiddenComment:
		return "hidden instruction in an HTML comment"
	case HiddenElement:
		return "hidden HTML element"
	case Override:
		return "instruction override"
	case Exfiltration:
		return "exfiltration lure"
	}
	return string(k)
}

// Finding is one prompt-injection marker found in a text.
type Finding struct {
	Kind Kind
	// Rule names the rule that matched, e.g. "ignore-instructions" or
	// "U+200B zero width space".
	Rule string
	// Line is the 1-based line where the marker starts.
	Line int
	// Excerpt is the matched text, shortened, with whitespace collapsed
	// and invisible characters written as <U+XXXX>, safe to log.
	Excerpt string

	offset int // byte offset in the scanned text, for ordering
}

// String renders f for a log line or an error message.
func (f Finding) String() string {
	return fmt.Sprintf("%s (%s, line %d: %q)", f.Kind.Reason(), f.Rule, f.Line, f.Excerpt)
}

// Scan returns the prompt-injection markers in text, in the order they
// appear; none means the text looks clean. Each rule is reported once, at
// its first match. A marker inside an HTML comment is reported as a hidden
// comment, not again as what it is.
func Scan(text string) []Finding {
	var out []Finding
	out = append(out, scanInvisible(text)...)
	comments, masked := scanComments(text)
	out = append(out, comments...)
	out = append(out, matchRules(text, masked, elementRules)...)
	out = append(out, matchRules(text, emphasisToSpace(masked), overrideRules)...)
	out = append(out, matchRules(text, masked, exfiltrationRules)...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].offset < out[j].offset })
	return out
}

// Summary names the distinct reasons among findings, in order, joined by
// "; " (e.g. "hidden instruction in an HTML comment; instruction
// override"); "" for none.
func Summary(findings []Finding) string {
	var reasons []string
	seen := map[Kind]bool{}
	for _, f := range findings {
		if !seen[f.Kind] {
			seen[f.Kind] = true
			reasons = append(reasons, f.Kind.Reason())
		}
	}
	return strings.Join(reasons, "; ")
}

// Details renders every finding, joined by "; ", for a log line or an
// error message.
func Details(findings []Finding) string {
	parts := make([]string, len(findings))
	for i, f := range findings {
		parts[i] = f.String()
	}
	return strings.Join(parts, "; ")
}

// rule is a pattern for one marker. reject, when set, discards a match
// that the pattern cannot rule out by itself.
type rule struct {
	name   string
	kind   Kind
	re     *regexp.Regexp
	reject func(text string, loc []int) bool
}

// firstMatch returns the location of rule's first accepted match in text,
// or nil.
func (r rule) firstMatch(text string) []int {
	for _, loc := range r.re.FindAllStringIndex(text, -1) {
		if r.reject == nil || !r.reject(text, loc) {
			return loc
		}
	}
	return nil
}

// matchRules applies rules to subject, a same-length rewrite of text
// (comments masked, emphasis removed), and reports each rule's first match
// with its excerpt taken from text.
func matchRules(text, subject string, rules []rule) []Finding {
	var out []Finding
	for _, r := range rules {
		if loc := r.firstMatch(subject); loc != nil {
			out = append(out, finding(text, r.kind, r.name, loc[0], loc[1]))
		}
	}
	return out
}

// finding builds a Finding for text[start:end].
func finding(text string, kind Kind, rule string, start, end int) Finding {
	return Finding{Kind: kind, Rule: rule, Line: lineOf(text, start), Excerpt: excerpt(text[start:end]), offset: start}
}

// lineOf is the 1-based line of byte offset off.
func lineOf(text string, off int) int {
	return strings.Count(text[:off], "\n") + 1
}

// Visible returns s with every invisible character Scan looks for written
// as <U+XXXX>, so that it can be shown without hiding or reordering text.
func Visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		if isInvisible(r) {
			fmt.Fprintf(&b, "<U+%04X>", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// excerptMax caps an excerpt, in characters.
const excerptMax = 80

// excerpt collapses whitespace, makes invisible characters visible and
// caps s at excerptMax characters.
func excerpt(s string) string {
	out := Visible(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(out) <= excerptMax {
		return out
	}
	return string([]rune(out)[:excerptMax-3]) + "..."
}

// emphasisToSpace replaces Markdown emphasis and code marks with spaces,
// keeping every offset, so "**ignore** all previous instructions" reads
// as prose.
func emphasisToSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '*' || r == '`' {
			return ' '
		}
		return r
	}, s)
}
