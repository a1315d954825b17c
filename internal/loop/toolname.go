package loop

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/talaria-agent/talaria/internal/editdistance"
)

// MinToolNameSimilarity is the least Similarity a fuzzy repair accepts.
const MinToolNameSimilarity = 0.7

// leakedMarks are the characters after which a tool name is cut: models leak
// quotes and XML-like tags into the name.
const leakedMarks = `"'<>`

// toolSuffixes are the endings stripped from a name, longest first.
var toolSuffixes = []string{"_tool", "-tool", "tool"}

// RepairToolName maps a model's tool name to a known tool, or reports false.
//
// It tries, in order, and stops at the first known name: the name as is; the
// name cut at the first quote or angle bracket and trimmed; that in lower
// case; in lower case with '-' and ' ' turned into '_'; CamelCase turned into
// snake_case ("HTTPGet" → "http_get"); each of these said twice or more
// taken once ("read_fileread_file" → "read_file") or with a repeated first
// segment taken once ("mcp_mcp_x" → "mcp_x"); each of these without a
// trailing "_tool", "-tool" or "tool" (stripped up to twice). Last, it takes
// the known name most similar (Similarity of at least
// MinToolNameSimilarity) to any of the lower-case candidates, the
// alphabetically first on a tie, among the names SameOperation allows: a
// fuzzy repair fixes a typo, it never changes what the call does.
//
// An empty name is never a tool. The name returned is always one of known.
func RepairToolName(name string, known []string) (string, bool) {
	if name == "" {
		return "", false
	}
	isKnown := make(map[string]bool, len(known))
	for _, k := range known {
		if k != "" {
			isKnown[k] = true
		}
	}
	if isKnown[name] {
		return name, true
	}
	cut := cutLeakedMarkup(name)
	if cut == "" {
		return "", false
	}
	lower := strings.ToLower(cut)
	forms := withUndoubled([]string{cut, lower, underscored(lower), camelToSnake(cut)})
	for _, c := range forms {
		if isKnown[c] {
			return c, true
		}
	}
	var fuzzy []string
	for _, c := range forms {
		isLower := c == strings.ToLower(c)
		if isLower {
			fuzzy = append(fuzzy, c)
		}
		for range 2 {
			stripped, ok := stripToolSuffix(c)
			if !ok {
				break
			}
			c = stripped
			if isKnown[c] {
				return c, true
			}
			if isLower {
				fuzzy = append(fuzzy, c)
			}
		}
	}
	return mostSimilar(dedupe(fuzzy), known)
}

// maxUndoubleLen bounds the names looked at for repetition.
const maxUndoubleLen = 256

// withUndoubled returns forms, each followed by its undoubled form and its
// form with a repeated first segment collapsed, where those differ.
func withUndoubled(forms []string) []string {
	out := make([]string, 0, 3*len(forms))
	for _, f := range forms {
		out = append(out, f)
		if u := undoubled(f); u != f {
			out = append(out, u)
		}
		if c := collapseLeadingSegment(f); c != f {
			out = append(out, c)
		}
	}
	return dedupe(out)
}

// undoubledSeparators may join the copies of a name said more than once.
var undoubledSeparators = []string{"", "_", "-", ".", " "}

// undoubled returns the unit s repeats when s is two to four copies of one
// name, joined by nothing or by one separator ("terminalterminal",
// "read_file_read_file"); otherwise s.
func undoubled(s string) string {
	n := len(s)
	if n > maxUndoubleLen {
		return s
	}
	for copies := 4; copies >= 2; copies-- {
		for _, sep := range undoubledSeparators {
			rest := n - (copies-1)*len(sep)
			if rest <= 0 || rest%copies != 0 {
				continue
			}
			unit := s[:rest/copies]
			if strings.Trim(unit, "_-. ") != "" && strings.Repeat(unit+sep, copies-1)+unit == s {
				return unit
			}
		}
	}
	return s
}

// collapseLeadingSegment drops repeats of the first '_'-separated segment
// ("mcp_mcp_knowledge_get" → "mcp_knowledge_get"); otherwise s.
func collapseLeadingSegment(s string) string {
	if len(s) > maxUndoubleLen {
		return s
	}
	first, rest, ok := strings.Cut(s, "_")
	if !ok || first == "" {
		return s
	}
	for strings.HasPrefix(rest, first+"_") {
		rest = rest[len(first)+1:]
	}
	return first + "_" + rest
}

// SameOperation reports whether a fuzzy repair of candidate into known keeps
// the operation: the shared leading '_'-separated segments (a namespace such
// as "mcp_knowledge_kb_") are set aside and what is left of each, the
// operation, must still be alike (Similarity of at least
// MinToolNameSimilarity, as in Hermes' namespace-prefix guard) and differ by
// no more than a typo: at most one edit (insertion, deletion, substitution
// or swap of neighbours) per five characters of the known operation, and at
// least one. So "kb_aed" is not "kb_add" and "tool" is not "todo", while
// "termnal" is "terminal" and "kb_saerch" is "kb_search".
func SameOperation(candidate, known string) bool {
	c, k := operation(candidate, known)
	if Similarity(c, k) < MinToolNameSimilarity {
		return false
	}
	kr := []rune(k)
	return editdistance.Runes([]rune(c), kr) <= max(1, len(kr)/5)
}

// operation strips the longest run of whole leading segments a and b share.
func operation(a, b string) (string, string) {
	for {
		sa, ra, okA := strings.Cut(a, "_")
		sb, rb, okB := strings.Cut(b, "_")
		if !okA || !okB || sa != sb {
			return a, b
		}
		a, b = ra, rb
	}
}

// cutLeakedMarkup cuts name at the first quote or angle bracket and trims
// the spaces around what is left.
func cutLeakedMarkup(name string) string {
	if i := strings.IndexAny(name, leakedMarks); i >= 0 {
		name = name[:i]
	}
	return strings.TrimSpace(name)
}

// underscored turns '-' and ' ' into '_'.
func underscored(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return '_'
		}
		return r
	}, s)
}

// camelToSnake turns CamelCase into lower-case snake_case: an '_' goes before
// an upper-case letter that follows a lower-case letter or digit, and before
// the last capital of an acronym followed by a lower-case letter, so
// "ReadFile" is "read_file" and "HTTPGet" is "http_get". '-' and ' ' become
// '_' as well.
func camelToSnake(s string) string {
	rs := []rune(underscored(s))
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// stripToolSuffix removes one trailing "_tool", "-tool" or "tool", in any
// case, and reports whether it did.
func stripToolSuffix(s string) (string, bool) {
	for _, suffix := range toolSuffixes {
		if n := len(s) - len(suffix); n >= 0 && strings.EqualFold(s[n:], suffix) {
			return s[:n], true
		}
	}
	return s, false
}

// dedupe drops empty and repeated strings, keeping the first of each.
func dedupe(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := ss[:0:0]
	for _, s := range ss {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// mostSimilar returns the known name with the highest Similarity to any of
// the candidates, if that is at least MinToolNameSimilarity and the pair
// keeps the operation (SameOperation); ties go to the alphabetically first
// name.
func mostSimilar(candidates, known []string) (string, bool) {
	best, bestScore := "", 0.0
	for _, k := range known {
		if k == "" {
			continue
		}
		kLen := utf8.RuneCountInString(k)
		for _, c := range candidates {
			cLen := utf8.RuneCountInString(c)
			// At most min(cLen, kLen) code points can match; skip pairs
			// whose best possible score is already too low.
			if 2*float64(min(cLen, kLen))/float64(cLen+kLen) < MinToolNameSimilarity {
				continue
			}
			score := Similarity(c, k)
			if score < MinToolNameSimilarity || !SameOperation(c, k) {
				continue
			}
			if best == "" || score > bestScore || (score == bestScore && k < best) {
				best, bestScore = k, score
			}
		}
	}
	return best, best != ""
}
