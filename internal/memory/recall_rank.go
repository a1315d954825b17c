package memory

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/talaria-agent/talaria/models"
)

// maxRecallWords bounds the words one recall searches for.
const maxRecallWords = 24

// recallStopWords are words too common to tell conversations apart.
var recallStopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does doing for from had has
		have how i if in into is it its just me my no not of on or our please so some than that the their them then
		there these they this those to too us was we were what when where which who why will with would you your
		about again also any all am any been being both each few get got more most much other over same should such
		very via want wants let lets hi hello thanks thank yes ok okay tell know think need use using make made`) {
		recallStopWords[w] = true
	}
}

// recallQueryWords are the words a recall looks for: those of the message
// and its expansions, lower case, without stop words and repeats, at most
// maxRecallWords; with expansions, the message's take at most two thirds
// of them, so the expansions' words are searched too. Pure.
func recallQueryWords(text string, expansions []string) []string {
	limit := maxRecallWords
	if len(expansions) > 0 {
		limit = maxRecallWords * 2 / 3
	}
	out := appendQueryWords(nil, text, limit)
	for _, e := range expansions {
		out = appendQueryWords(out, e, maxRecallWords)
	}
	return out
}

// appendQueryWords appends the words of t that out lacks, until out has
// limit words. Pure.
func appendQueryWords(out []string, t string, limit int) []string {
	for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		if len(out) >= limit {
			break
		}
		if len([]rune(w)) < 2 || recallStopWords[w] || slices.Contains(out, w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// Weights and cuts of recall's scoring.
const (
	// recallPassageWeight is a session's best passage's weight beside
	// its summary's (1).
	recallPassageWeight = 0.5
	// recallMinCosine: a summary less similar to the message than this
	// adds nothing.
	recallMinCosine = 0.5
	// recallRelativeCut: a session scoring less than this share of the
	// best one is left out.
	recallRelativeCut = 0.4
	// recallPassagesPerSession is how many passages a session shows.
	recallPassagesPerSession = 2
)

// recallRanked is one session recall chose, with its passages, best first.
type recallRanked struct {
	SessionID string
	Score     float64
	Passages  []models.Passage
}

// rankRecall combines what the searches found into the sessions to recall,
// best first, at most limit: each source's scores are divided by its
// best, so that each counts from 0 to 1; a summary's text match counts 1,
// its best passage recallPassageWeight, and its vector's cosine (when at
// least recallMinCosine) as it is. A session scoring less than
// recallRelativeCut of the best is left out. Pure.
func rankRecall(summaries []models.RecallHit, passages []models.Passage, cosines map[string]float64, limit int) []recallRanked {
	scores := map[string]float64{}
	var order []string
	add := func(id string, s float64) {
		if _, ok := scores[id]; !ok {
			order = append(order, id)
		}
		scores[id] += s
	}
	if best := bestOf(summaries, func(h models.RecallHit) float64 { return h.Score }); best > 0 {
		for _, h := range summaries {
			add(h.SessionID, max(h.Score, 0)/best)
		}
	}
	byPassage := map[string][]models.Passage{}
	if best := bestOf(passages, func(p models.Passage) float64 { return p.Score }); best > 0 {
		for _, p := range passages {
			got := byPassage[p.SessionID]
			if len(got) == 0 {
				add(p.SessionID, recallPassageWeight*max(p.Score, 0)/best)
			}
			if len(got) < recallPassagesPerSession && !slices.ContainsFunc(got, func(q models.Passage) bool { return q.Content == p.Content }) {
				byPassage[p.SessionID] = append(got, p)
			}
		}
	}
	ids := make([]string, 0, len(cosines))
	for id := range cosines {
		ids = append(ids, id)
	}
	slices.Sort(ids) // a stable order for sessions found by meaning only
	for _, id := range ids {
		if c := cosines[id]; c >= recallMinCosine {
			add(id, c)
		}
	}
	out := make([]recallRanked, 0, len(order))
	for _, id := range order {
		if scores[id] > 0 {
			out = append(out, recallRanked{SessionID: id, Score: scores[id], Passages: byPassage[id]})
		}
	}
	slices.SortStableFunc(out, func(a, b recallRanked) int { return cmp.Compare(b.Score, a.Score) })
	if len(out) == 0 {
		return nil
	}
	cut := out[0].Score * recallRelativeCut
	n := 0
	for n < len(out) && n < limit && out[n].Score >= cut {
		n++
	}
	return out[:n]
}

// bestOf is the highest score of xs (0 for none). Pure.
func bestOf[T any](xs []T, score func(T) float64) float64 {
	best := 0.0
	for _, x := range xs {
		best = max(best, score(x))
	}
	return best
}

// recallExcerpt is the part of a passage around its first matching word,
// at most n bytes, whitespace collapsed, cuts marked with "…". Pure.
func recallExcerpt(content string, words []string, n int) string {
	text := strings.Join(strings.Fields(content), " ")
	if len(text) <= n {
		return text
	}
	lower := strings.ToLower(text)
	at := -1
	for _, w := range words {
		if i := strings.Index(lower, w); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	start := max(0, at-n/3)
	if at < 0 {
		start = 0
	}
	end := min(len(text), start+n)
	start = max(0, end-n)
	for start > 0 && start < len(text) && !isRuneStart(text[start]) {
		start++
	}
	for end < len(text) && !isRuneStart(text[end]) {
		end--
	}
	out := text[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(text) {
		out += "…"
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
