package models

import (
	"strings"
	"unicode"
)

// searchTerms splits a search query into the terms every hit must contain:
// its words, and its "quoted phrases" kept whole (words in that order). A
// quote left open runs to the end of the query. Terms holding no letter or
// digit are dropped: the full-text indexes hold only words. Pure.
func searchTerms(query string) []string {
	var terms []string
	add := func(t string) {
		t = strings.Join(strings.Fields(t), " ")
		if strings.IndexFunc(t, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0 {
			terms = append(terms, t)
		}
	}
	for i, part := range strings.Split(query, `"`) {
		if i%2 == 1 { // inside quotes
			add(part)
			continue
		}
		for _, w := range strings.Fields(part) {
			add(w)
		}
	}
	return terms
}

// fts5Query is the SQLite FTS5 MATCH expression requiring every term, each
// a quoted FTS5 string so that nothing in it is query syntax.
func fts5Query(terms []string) string {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(quoted, " AND ")
}
