package compress

import (
	"cmp"
	"strings"
)

// noneText fills a section that has nothing in it.
const noneText = "(none)"

// NormalizeSummary turns a model's reply into a valid summary: code fences
// around it and any preamble before SummaryHeader are dropped, the header is
// added when missing, and the sections are rewritten in the order of
// Sections, each as "## <section>" followed by its text or "(none)" when the
// reply lacked it or left it empty. Headings are recognised at levels 1 to 4,
// case-insensitively, with an optional trailing colon; other text before the
// first recognised heading is kept after the header. It returns ok=false
// (and "") when the reply is empty or white space only.
func NormalizeSummary(reply string) (string, bool) {
	text := stripFence(strings.TrimSpace(reply))
	if text == "" {
		return "", false
	}
	if i := strings.Index(text, SummaryHeader); i >= 0 {
		text = text[i+len(SummaryHeader):]
	}

	bodies := make([][]string, len(Sections))
	var preamble []string
	cur := -1
	for _, line := range strings.Split(text, "\n") {
		if idx, found := sectionHeading(line); found {
			cur = idx
			continue
		}
		if cur < 0 {
			preamble = append(preamble, line)
		} else {
			bodies[cur] = append(bodies[cur], line)
		}
	}

	return renderSummary(strings.Join(preamble, "\n"), func(i int) string { return strings.Join(bodies[i], "\n") }), true
}

// renderSummary writes a summary in its one form: SummaryHeader, the
// preamble when there is one, then every section of Sections in order as
// "## <section>" and its body (trimmed; "(none)" when empty).
func renderSummary(preamble string, body func(section int) string) string {
	var b strings.Builder
	b.WriteString(SummaryHeader)
	b.WriteString("\n")
	if p := strings.TrimSpace(preamble); p != "" {
		b.WriteString("\n")
		b.WriteString(p)
		b.WriteString("\n")
	}
	for i, s := range Sections {
		text := cmp.Or(strings.TrimSpace(body(i)), noneText)
		b.WriteString("\n## ")
		b.WriteString(s)
		b.WriteString("\n")
		b.WriteString(text)
		b.WriteString("\n")
	}
	return b.String()
}

// sectionHeading reports which of Sections line is a heading for.
func sectionHeading(line string) (int, bool) {
	t := strings.TrimSpace(line)
	level := len(t) - len(strings.TrimLeft(t, "#"))
	if level < 1 || level > 4 {
		return 0, false
	}
	t = strings.TrimSpace(t[level:])
	t = strings.TrimSpace(strings.TrimSuffix(t, ":"))
	t = strings.Trim(t, "*_ ")
	for i, s := range Sections {
		if strings.EqualFold(t, s) {
			return i, true
		}
	}
	return 0, false
}

// stripFence removes one Markdown code fence wrapping the whole of s.
func stripFence(s string) string {
	if !strings.HasPrefix(s, "```") {
		return s
	}
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return strings.TrimSpace(strings.Trim(s, "`"))
	}
	s = s[nl+1:]
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(s, "```")
	return strings.TrimSpace(s)
}
