package workflows

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Custom search attributes of turn workflows, so an operator finds a
// session's turns in the Temporal Web UI or CLI
// (TalariaSessionId = "..."), and how each ended (TalariaStopReason).
const (
	SearchAttrSessionID  = "TalariaSessionId"
	SearchAttrStopReason = "TalariaStopReason"
)

var (
	sessionIDKey  = temporal.NewSearchAttributeKeyKeyword(SearchAttrSessionID)
	stopReasonKey = temporal.NewSearchAttributeKeyKeyword(SearchAttrStopReason)
)

// SearchAttributes are the custom search attributes turn workflows use,
// with their types, to register on a namespace.
func SearchAttributes() map[string]enumspb.IndexedValueType {
	return map[string]enumspb.IndexedValueType{
		SearchAttrSessionID:  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		SearchAttrStopReason: enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	}
}

// searchAttributesReady says whether this process's worker found the
// search attributes registered on its namespace (SetSearchAttributesReady).
var searchAttributesReady atomic.Bool

// SetSearchAttributesReady tells this process's workflows whether the
// namespace has SearchAttributes registered. A turn started with an
// unregistered attribute would never start, so turns carry them only when
// the worker has seen them registered. Workflows read it through a side
// effect, so a replay (elsewhere, later) follows what was decided.
func SetSearchAttributesReady(ready bool) { searchAttributesReady.Store(ready) }

// visibilitySideEffect is the id of the side effect that records whether
// the worker had the search attributes.
const visibilitySideEffect = "talaria-search-attributes"

// withTurnVisibility returns opts for starting a turn child workflow of in,
// with (since changeTurnVisibility) a readable summary and details and, if
// the namespace has them, the turn's search attributes.
func withTurnVisibility(ctx workflow.Context, opts workflow.ChildWorkflowOptions, in TurnInput) workflow.ChildWorkflowOptions {
	if !has(ctx, changeTurnVisibility) {
		return opts
	}
	opts.StaticSummary = fitPayload(turnSummary(in), maxSummaryJSON)
	opts.StaticDetails = fitPayload(turnDetails(in), maxDetailsJSON)
	var ready bool
	// The worker's knowledge, read once and recorded: replays follow the record.
	v := workflow.MutableSideEffect(ctx, visibilitySideEffect,
		func(workflow.Context) any { return searchAttributesReady.Load() },
		func(a, b any) bool { return a == b })
	if err := v.Get(&ready); err == nil && ready && keywordFits(in.SessionID) {
		opts.TypedSearchAttributes = temporal.NewSearchAttributes(sessionIDKey.ValueSet(in.SessionID))
	}
	return opts
}

// maxKeyword is the longest Keyword value every visibility store takes
// (PostgreSQL and MySQL keep them in 255-character columns).
const maxKeyword = 255

// keywordFits says whether s can be a Keyword search attribute's value;
// a longer one would make Temporal refuse the turn's start. Pure.
func keywordFits(s string) bool { return s != "" && utf8.RuneCountInString(s) <= maxKeyword }

// markStopReason records how the turn ended as its TalariaStopReason
// (since changeTurnVisibility), when the turn carries the session's search
// attribute, i.e. the namespace has them.
func markStopReason(ctx workflow.Context, reason StopReason) {
	if reason == "" || !has(ctx, changeTurnVisibility) {
		return
	}
	if !workflow.GetTypedSearchAttributes(ctx).ContainsKey(sessionIDKey) {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, stopReasonKey.ValueSet(string(reason))); err != nil {
		workflow.GetLogger(ctx).Warn("record the stop reason for search", "error", err)
	}
}

// Lengths of what a turn shows in the UI.
const (
	summaryWords = 12
	summaryRunes = 80
	detailsRunes = 400
	// maxSummaryJSON and maxDetailsJSON keep the summary and details, as
	// the JSON payloads Temporal stores, under its limits (400 and 20,000
	// bytes by default, limit.userMetadata{Summary,Details}Size): a start
	// over them would be refused, and the turn would never start.
	maxSummaryJSON = 300
	maxDetailsJSON = 16000
)

// fitPayload is s, cut (with "…") until its JSON encoding, as a payload
// holds it, has at most max bytes. Pure.
func fitPayload(s string, max int) string {
	r := []rune(s)
	cut := false
	for len(r) > 0 {
		t := string(r)
		if cut {
			t += "…"
		}
		if b, err := json.Marshal(t); err == nil && len(b) <= max {
			return t
		}
		r, cut = r[:len(r)-1], true
	}
	return ""
}

// turnSummary is the turn's one-line summary: "session S · turn N: the
// first words of the message". Pure.
func turnSummary(in TurnInput) string {
	s := fmt.Sprintf("session %s · turn %d", plainText(in.SessionID, 64), in.TurnNumber)
	if words := firstWords(in.UserMessage, summaryWords, summaryRunes); words != "" {
		s += ": " + words
	}
	return s
}

// turnDetails is the turn's details: session, turn, model (if the sender
// named one) and the message's beginning. Pure.
func turnDetails(in TurnInput) string {
	lines := []string{
		"**Session:** " + plainText(in.SessionID, 128),
		fmt.Sprintf("**Turn:** %d", in.TurnNumber),
	}
	if in.Model != "" {
		lines = append(lines, "**Model:** "+plainText(in.Model, 128))
	}
	if msg := firstWords(in.UserMessage, -1, detailsRunes); msg != "" {
		lines = append(lines, "**Message:** "+msg)
	}
	return strings.Join(lines, "\n\n")
}

// firstWords is text as one line of at most max words (max < 0: any) and
// runes, "…" marking a cut, made inert for Markdown. Pure.
func firstWords(text string, maxWords, maxRunes int) string {
	words := strings.Fields(stripControls(text))
	cut := false
	if maxWords >= 0 && len(words) > maxWords {
		words, cut = words[:maxWords], true
	}
	s := strings.Join(words, " ")
	if r := []rune(s); len(r) > maxRunes {
		s, cut = strings.TrimRightFunc(string(r[:maxRunes]), unicode.IsSpace), true
	}
	if cut && s != "" {
		s += "…"
	}
	return escapeMarkdown(s)
}

// plainText is s on one line, at most max runes, inert for Markdown. Pure.
func plainText(s string, maxRunes int) string {
	return firstWords(s, -1, maxRunes)
}

// stripControls replaces control and format characters (escape sequences,
// bidirectional overrides, line breaks) with spaces. Pure.
func stripControls(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)
}

// markdownSpecial are the characters that make Markdown of a line that
// does not start with text of ours: links, images, HTML, emphasis, code,
// tables, headings.
const markdownSpecial = "\\`*_[]()<>#!|~"

// escapeMarkdown backslash-escapes Markdown's special characters, so a
// message shows as the text it is (never a link, image or HTML). Pure.
func escapeMarkdown(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(markdownSpecial, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
