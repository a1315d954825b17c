package format

import (
	"strings"
)

// Flavour is a platform's formatting dialect.
type Flavour int

const (
	// FlavourPlain is text without markup, for platforms that format
	// nothing. Links read "text (url)".
	FlavourPlain Flavour = iota
	// FlavourTelegramHTML is the Telegram Bot API's HTML parse mode.
	FlavourTelegramHTML
	// FlavourSlack is Slack's mrkdwn.
	FlavourSlack
	// FlavourDiscord is Discord's Markdown.
	FlavourDiscord
	// FlavourWhatsApp is WhatsApp's formatting: *bold*, _italic_,
	// ~strike~, `code` and ``` blocks; links read "text (url)", and
	// nothing is escaped (WhatsApp has no escape).
	FlavourWhatsApp
)

// Limit is the flavour's message size limit: TelegramLimit for the
// Telegram flavours, SlackLimit for Slack, and TelegramLimit for plain
// text, the smaller of the two platforms.
func (f Flavour) Limit() int {
	switch f {
	case FlavourSlack:
		return SlackLimit
	case FlavourDiscord:
		return DiscordLimit
	case FlavourWhatsApp:
		return WhatsAppLimit
	}
	return TelegramLimit
}

// SlackMrkdwn renders Markdown as Slack mrkdwn.
func SlackMrkdwn(md string) string { return Render(md, FlavourSlack) }

// Literal makes text literal in Markdown: every character that could
// start or end markup is escaped. Pure.
func Literal(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '*', '_', '`', '[', ']', '<', '>', '#', '~', '|':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Fence is a Markdown code fence longer than any run of backticks in s:
// s between two of them is a code block, whatever it holds. Pure.
func Fence(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// Plain renders Markdown as unformatted text.
func Plain(md string) string { return Render(md, FlavourPlain) }

// Render renders Markdown in one flavour, whole, however long.
func Render(md string, f Flavour) string {
	d := newDoc(md, f)
	s := d.skipLead(0)
	return d.render(s, d.trimEnd(s, len(d.text)), false)
}

// prepare adapts runs to what a flavour can express.
func prepare(runs []run, f Flavour) []run {
	b := &builder{}
	for i, r := range runs {
		switch f {
		case FlavourSlack:
			if r.a.link != "" {
				r.a = attrs{quote: r.a.quote, link: r.a.link}
			}
		case FlavourDiscord:
			// Discord reads emphasis only between markers that touch text:
			// the spaces at a styled run's edges go outside its markers.
			if emphasis := r.a.bold || r.a.italic || r.a.strike; emphasis && !r.a.code && !r.pre {
				core := strings.Trim(r.text, " \t")
				lead, trail := r.text[:strings.Index(r.text, core)], ""
				if core == "" {
					lead = r.text
				} else {
					trail = r.text[len(lead)+len(core):]
				}
				bare := attrs{quote: r.a.quote, link: r.a.link}
				b.add(run{text: lead, a: bare})
				r.text = core
				b.add(r)
				b.add(run{text: trail, a: bare})
				continue
			}
		case FlavourPlain, FlavourWhatsApp:
			link := r.a.link
			r.a.link = ""
			if f == FlavourPlain {
				r.a = attrs{quote: r.a.quote}
			}
			b.add(r)
			if link != "" && (i+1 == len(runs) || runs[i+1].a.link != link) && r.text != link {
				b.add(run{text: " (" + link + ")", a: r.a})
			}
			continue
		}
		b.add(r)
	}
	b.flush()
	return b.out
}

type layerKind uint8

const (
	lQuote layerKind = iota
	lLink
	lBold
	lItalic
	lStrike
	lCode
)

type layer struct {
	kind layerKind
	url  string
}

// layers lists a run's inline attributes outermost first.
func layers(a attrs, f Flavour) []layer {
	var ls []layer
	if a.quote && f == FlavourTelegramHTML {
		ls = append(ls, layer{kind: lQuote})
	}
	if a.link != "" {
		ls = append(ls, layer{kind: lLink, url: a.link})
	}
	if a.bold {
		ls = append(ls, layer{kind: lBold})
	}
	if a.italic {
		ls = append(ls, layer{kind: lItalic})
	}
	if a.strike {
		ls = append(ls, layer{kind: lStrike})
	}
	if a.code {
		ls = append(ls, layer{kind: lCode})
	}
	return ls
}

// writer serialises runs of one part.
type writer struct {
	f         Flavour
	sb        strings.Builder
	lineStart bool
}

// tick writes Slack backticks, keeping them apart from a backtick just
// written so no fence can form that was not meant.
func (w *writer) tick(s string) {
	if b := w.sb.String(); b != "" && b[len(b)-1] == '`' {
		w.sb.WriteRune(zwsp)
	}
	w.sb.WriteString(s)
}

// serialize writes runs; plain drops all markup.
func serialize(runs []run, f Flavour, plain bool) string {
	w := &writer{f: f, lineStart: true}
	var stack []layer
	for _, r := range runs {
		var want []layer
		if !r.pre && !plain {
			want = layers(r.a, f)
		}
		common := 0
		for common < len(stack) && common < len(want) && stack[common] == want[common] {
			common++
		}
		for len(stack) > common {
			w.close(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
		}
		if r.text[0] != '\n' && !r.pre && !plain {
			w.prefix(r.a.quote)
		}
		for _, l := range want[common:] {
			w.open(l)
			stack = append(stack, l)
		}
		switch {
		case r.pre && !plain:
			w.pre(r.text, r.lang)
		default:
			w.text(r.text, r.a.code && !plain, r.a.quote && !plain)
		}
	}
	for len(stack) > 0 {
		w.close(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
	}
	return w.sb.String()
}

// prefix starts a quoted line in the flavours that quote line by line.
func (w *writer) prefix(quote bool) {
	if !quote || !w.lineStart {
		return
	}
	switch w.f {
	case FlavourSlack, FlavourPlain, FlavourDiscord, FlavourWhatsApp:
		w.sb.WriteString("> ")
	}
	w.lineStart = false
}

func (w *writer) open(l layer) {
	switch w.f {
	case FlavourTelegramHTML:
		switch l.kind {
		case lQuote:
			w.sb.WriteString("<blockquote>")
		case lLink:
			w.sb.WriteString(`<a href="` + htmlEscape(l.url, true) + `">`)
		case lBold:
			w.sb.WriteString("<b>")
		case lItalic:
			w.sb.WriteString("<i>")
		case lStrike:
			w.sb.WriteString("<s>")
		case lCode:
			w.sb.WriteString("<code>")
		}
	case FlavourSlack:
		if l.kind == lLink {
			w.sb.WriteString("<" + slackURL(l.url) + "|")
			return
		}
		w.tick([...]string{"", "", "*", "_", "~", "`"}[l.kind])
	case FlavourDiscord:
		w.tick([...]string{"", "[", "**", "*", "~~", "`"}[l.kind])
	case FlavourWhatsApp:
		w.tick([...]string{"", "", "*", "_", "~", "`"}[l.kind])
	}
}

func (w *writer) close(l layer) {
	switch w.f {
	case FlavourTelegramHTML:
		w.sb.WriteString([...]string{"</blockquote>", "</a>", "</b>", "</i>", "</s>", "</code>"}[l.kind])
	case FlavourSlack:
		w.tick([...]string{"", ">", "*", "_", "~", "`"}[l.kind])
	case FlavourDiscord:
		if l.kind == lLink {
			w.sb.WriteString("](" + discordURL(l.url) + ")")
			return
		}
		w.tick([...]string{"", "", "**", "*", "~~", "`"}[l.kind])
	case FlavourWhatsApp:
		w.tick([...]string{"", "", "*", "_", "~", "`"}[l.kind])
	}
}

func (w *writer) text(s string, code, quote bool) {
	for _, r := range s {
		if r == '\n' {
			if w.lineStart && quote && w.f != FlavourTelegramHTML {
				w.sb.WriteString(">")
			}
			w.sb.WriteByte('\n')
			w.lineStart = true
			continue
		}
		w.prefix(quote)
		w.lineStart = false
		w.char(r, code)
	}
}

func (w *writer) char(r rune, code bool) {
	switch w.f {
	case FlavourTelegramHTML:
		switch r {
		case '&':
			w.sb.WriteString("&amp;")
		case '<':
			w.sb.WriteString("&lt;")
		case '>':
			w.sb.WriteString("&gt;")
		default:
			w.sb.WriteRune(r)
		}
	case FlavourSlack:
		switch {
		case r == '`' && code:
			w.sb.WriteRune('ˋ')
		case r == '`':
			w.tick("`")
		case r == '&':
			w.sb.WriteString("&amp;")
		case r == '<':
			w.sb.WriteString("&lt;")
		case r == '>':
			w.sb.WriteString("&gt;")
		default:
			w.sb.WriteRune(r)
		}
	case FlavourWhatsApp:
		switch {
		case r == '`' && code:
			w.sb.WriteRune('ˋ')
		case r == '`':
			w.tick("`")
		default:
			w.sb.WriteRune(r)
		}
	case FlavourDiscord:
		switch {
		case r == '`' && code:
			w.sb.WriteRune('ˋ')
		case code:
			w.sb.WriteRune(r)
		case strings.ContainsRune(discordMarkers, r):
			w.sb.WriteByte('\\')
			w.sb.WriteRune(r)
		default:
			w.sb.WriteRune(r)
		}
	default:
		w.sb.WriteRune(r)
	}
}

// discordMarkers are the characters escaped in Discord text: the
// Markdown markers, and < and @, which start mentions (<@id>, @everyone).
const discordMarkers = "\\*_~`|<>[]()#-+.@"

var discordURLEscaper = strings.NewReplacer("(", "%28", ")", "%29", " ", "%20", "<", "%3C", ">", "%3E", "@", "%40")

func discordURL(u string) string { return discordURLEscaper.Replace(u) }

const zwsp = '\u200B'

func (w *writer) pre(s, lang string) {
	switch w.f {
	case FlavourTelegramHTML:
		if lang != "" {
			w.sb.WriteString(`<pre><code class="language-` + lang + `">` + htmlEscape(s, false) + "</code></pre>")
		} else {
			w.sb.WriteString("<pre>" + htmlEscape(s, false) + "</pre>")
		}
	case FlavourSlack, FlavourWhatsApp:
		w.tick("```")
		for _, r := range s {
			w.char(r, false)
		}
		w.tick("```")
	case FlavourDiscord:
		if !w.lineStart {
			w.sb.WriteByte('\n')
		}
		w.sb.WriteString("```" + lang + "\n")
		for _, r := range strings.TrimSuffix(s, "\n") {
			if r == '`' {
				w.tick("`") // no fence can form inside
			} else {
				w.sb.WriteRune(r)
			}
		}
		w.sb.WriteString("\n```")
	default:
		w.sb.WriteString(s)
	}
	w.lineStart = false
}

func htmlEscape(s string, attr bool) string {
	if !strings.ContainsAny(s, "&<>\"") {
		return s
	}
	var sb strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			sb.WriteString("&amp;")
		case r == '<':
			sb.WriteString("&lt;")
		case r == '>':
			sb.WriteString("&gt;")
		case r == '"' && attr:
			sb.WriteString("&quot;")
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

var slackURLEscaper = strings.NewReplacer("&", "&amp;", "|", "%7C", "<", "%3C", ">", "%3E")

func slackURL(u string) string { return slackURLEscaper.Replace(u) }
