package compress

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/talaria-agent/talaria/models"
)

// SummaryHeader opens every compaction summary.
const SummaryHeader = "[CONTEXT COMPACTION — REFERENCE ONLY]"

// Sections are the summary's "## " sections, in order.
var Sections = []string{"Active Task", "Goal", "Constraints & Preferences", "Completed Actions", "Active State", "In Progress", "Blocked", "Key Decisions", "Resolved Questions", "Pending Asks", "Relevant Files", "Remaining Work", "Critical Context"}

// Clipping limits for the transcript shown to the summariser.
const (
	transcriptMessageChars = 2000
	transcriptArgsChars    = 300
)

// previousMarker introduces the prior summary in SummaryRequest.
const previousMarker = "PREVIOUS SUMMARY (update it, do not discard it):"

// SummaryRequest builds the instruction for the summarising model call. It
// shows middle as a readable transcript ("role: content", tool calls as
// "-> name(args)", each message clipped to about 2,000 characters) and asks
// for exactly SummaryHeader followed by a "## <section>" heading for every
// entry of Sections, in order. When previous (the prior summary) is not
// empty, it is included with an instruction to UPDATE it with the new
// transcript rather than summarise it blindly.
func SummaryRequest(middle []models.Message, previous string) string {
	var b strings.Builder
	b.WriteString("You are compacting the middle of a long agent conversation so the agent can keep working within its context window. ")
	b.WriteString("The messages before and after this part are kept verbatim; this part will be replaced by your summary.\n\n")
	previous = strings.TrimSpace(previous)
	if previous != "" {
		b.WriteString("An earlier compaction already summarised older parts of the conversation. ")
		b.WriteString("UPDATE that summary with what happened in the transcript below: keep every fact that is still true, ")
		b.WriteString("move finished work to Completed Actions, replace stale state, and never drop the task or constraints.\n\n")
		b.WriteString(previousMarker + "\n")
		b.WriteString(previous)
		b.WriteString("\n\n")
	}
	b.WriteString("TRANSCRIPT TO SUMMARISE:\n")
	if len(middle) == 0 {
		b.WriteString("(no messages)\n")
	}
	for _, m := range middle {
		writeTranscriptLine(&b, m)
	}
	b.WriteString("\nReply with the summary only, in exactly this format: the line\n")
	b.WriteString(SummaryHeader)
	b.WriteString("\nthen each of these headings, in this order, each followed by concise bullet points ")
	b.WriteString("(write \"(none)\" when a section has nothing):\n")
	for _, s := range Sections {
		b.WriteString("## ")
		b.WriteString(s)
		b.WriteString("\n")
	}
	b.WriteString("\nBe specific: keep file paths, commands, identifiers, numbers, errors and the user's exact requirements. ")
	b.WriteString("The summary is reference material for the agent, not a message to the user.\n")
	return b.String()
}

// writeTranscriptLine writes one message of the transcript.
func writeTranscriptLine(b *strings.Builder, m models.Message) {
	role := cmp.Or(m.Role, "unknown")
	if role == "tool" && m.Name != "" {
		role = "tool (" + m.Name + ")"
	}
	var body strings.Builder
	body.WriteString(m.Content)
	for _, img := range m.Images {
		if body.Len() > 0 {
			body.WriteString("\n")
		}
		fmt.Fprintf(&body, "[picture: %s]", clip(cmp.Or(img.Path, img.URL, img.Name, "unnamed"), transcriptArgsChars))
	}
	for _, tc := range m.ToolCalls {
		if body.Len() > 0 {
			body.WriteString("\n")
		}
		fmt.Fprintf(&body, "-> %s(%s)", tc.Function.Name, clip(tc.Function.Arguments, transcriptArgsChars))
	}
	text := cmp.Or(strings.TrimSpace(clip(body.String(), transcriptMessageChars)), "(empty)")
	b.WriteString(role)
	b.WriteString(": ")
	b.WriteString(text)
	b.WriteString("\n")
}

// PreviousSummary returns the content of the latest message in msgs whose
// content (ignoring leading white space) starts with SummaryHeader, or "".
func PreviousSummary(msgs []models.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if IsSummary(msgs[i].Content) {
			return msgs[i].Content
		}
	}
	return ""
}

// IsSummary reports whether s is a compaction summary: it starts (after
// white space) with SummaryHeader.
func IsSummary(s string) bool {
	return strings.HasPrefix(strings.TrimLeft(s, " \t\r\n"), SummaryHeader)
}
