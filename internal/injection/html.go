package injection

import (
	"regexp"
	"strings"
)

// commentPattern matches an HTML comment; an unterminated one runs to the
// end of the text, as a renderer would hide it.
var commentPattern = regexp.MustCompile(`(?s)<!--(.*?)(?:-->|\z)`)

// scanComments reports each HTML comment that holds a hidden instruction
// (an override, an exfiltration lure or a comment rule), once per
// comment, and returns text with every comment masked by spaces (newlines
// kept), so the other rules do not report the same marker again.
func scanComments(text string) (findings []Finding, masked string) {
	locs := commentPattern.FindAllStringSubmatchIndex(text, -1)
	if len(locs) == 0 {
		return nil, text
	}
	b := []byte(text)
	for _, loc := range locs {
		if f, ok := scanComment(text, loc[2], loc[3]); ok {
			findings = append(findings, f)
		}
		for i := loc[0]; i < loc[1]; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	return findings, string(b)
}

// scanComment checks the body text[start:end] of one comment against the
// override, exfiltration and comment rules, and reports the first match
// as a hidden comment.
func scanComment(text string, start, end int) (Finding, bool) {
	body := text[start:end]
	groups := [][]rule{overrideRules, exfiltrationRules, commentRules}
	for _, rules := range groups {
		subject := body
		if strings.Contains(body, "*") || strings.Contains(body, "`") {
			subject = emphasisToSpace(body)
		}
		for _, r := range rules {
			if loc := r.firstMatch(subject); loc != nil {
				return finding(text, HiddenComment, r.name, start+loc[0], start+loc[1]), true
			}
		}
	}
	return Finding{}, false
}
