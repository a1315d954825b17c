package loop

import (
	"strings"
	"unicode"
	"unicode/utf8"
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
// snake_case ("HTTPGet" → "http_get"); each of these without a trailing
// "_tool", "-tool" or "tool" (stripped up to twice). Last, it takes the known
// name most similar (Similarity of at least MinToolNameSimilarity) to any of
// the lower-case candidates, the alphabetically first on a tie.
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
	under := underscored(lower)
	snake := camelToSnake(cut)
	for _, c := range []string{cut, lower, under, snake} {
		if isKnown[c] {
			return c, true
		}
	}
	fuzzy := []string{lower, under, snake}
	for i, c := range []string{cut, lower, under, snake} {
		for range 2 {
			stripped, ok := stripToolSuffix(c)
			if !ok {
				break
			}
			c = stripped
			if isKnown[c] {
				return c, true
			}
			if i > 0 {
				fuzzy = append(fuzzy, c)
			}
		}
	}
	return mostSimilar(dedupe(fuzzy), known)
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
// the candidates, if that is at least MinToolNameSimilarity; ties go to the
// alphabetically first name.
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
			if score < MinToolNameSimilarity {
				continue
			}
			if best == "" || score > bestScore || (score == bestScore && k < best) {
				best, bestScore = k, score
			}
		}
	}
	return best, best != ""
}
