package format

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// attrs is the inline styling of a run.
type attrs struct {
	quote  bool
	link   string // URL, "" when the run is not a link
	bold   bool
	italic bool
	strike bool
	code   bool
}

// run is a stretch of text with one styling, or a slice of a
// preformatted block (pre true, lang its language, attrs unused).
type run struct {
	text string
	a    attrs
	pre  bool
	lang string
}

// maxDepth bounds nesting of block quotes and lists; deeper nesting is
// flattened, so hostile input cannot make the walk arbitrarily deep.
const maxDepth = 16

var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

// sanitize makes s valid UTF-8 with LF line ends and no control
// characters other than TAB and LF.
func sanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\r':
			return '\n'
		case r == '\n' || r == '\t':
			return r
		case r < 0x20, r >= 0x7f && r < 0xa0:
			return -1
		case r == '\u2028' || r == '\u2029':
			return '\n'
		}
		return r
	}, s)
}

// parse lowers Markdown into runs. allowTG says whether tg:// links are
// kept.
func parse(src string, allowTG bool) []run {
	source := []byte(sanitize(src))
	doc := md.Parser().Parse(text.NewReader(source))
	b := &builder{src: source, allowTG: allowTG}
	b.blocks(doc, attrs{}, 0, "")
	b.flush()
	return b.out
}

type builder struct {
	src     []byte
	allowTG bool
	out     []run
	size    int // bytes of text added
	cur     run // the run being built, its text in curText
	curText strings.Builder
	hasCur  bool
	started bool // a block has been written
	nextPre bool // the block being started is a code block
}

// emit appends text with styling, putting every newline into a run of
// its own that keeps only the quote attribute.
func (b *builder) emit(s string, a attrs) {
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			b.add(run{text: s, a: a})
			return
		}
		if i > 0 {
			b.add(run{text: s[:i], a: a})
		}
		b.add(run{text: "\n", a: attrs{quote: a.quote}})
		s = s[i+1:]
	}
}

// add appends a run, merging it into the last one when the styling is
// the same (in a buffer, so long texts of many pieces cost linear time).
func (b *builder) add(r run) {
	if r.text == "" {
		return
	}
	b.size += len(r.text)
	if b.hasCur && b.cur.pre == r.pre && b.cur.lang == r.lang && b.cur.a == r.a {
		b.curText.WriteString(r.text)
		return
	}
	b.flush()
	b.cur, b.hasCur = r, true
	b.curText.WriteString(r.text)
}

// flush moves the run being built into out.
func (b *builder) flush() {
	if b.hasCur {
		b.cur.text = b.curText.String()
		b.out = append(b.out, b.cur)
		b.curText = strings.Builder{}
		b.hasCur = false
	}
}

// blockStart separates a block from the previous one by sep. The
// separator is quoted only between two quoted blocks that are not code
// blocks (code blocks are never quoted).
func (b *builder) blockStart(a attrs, sep string) {
	if b.started {
		q := a.quote && !b.nextPre && !(b.hasCur && b.cur.pre)
		b.emit(sep, attrs{quote: q})
	}
	b.started = true
}

func (b *builder) blocks(parent ast.Node, a attrs, depth int, indent string) {
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		b.block(n, a, depth, indent)
	}
}

func (b *builder) block(n ast.Node, a attrs, depth int, indent string) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		b.blockStart(a, "\n\n")
		b.emit(indent, a)
		b.inlines(n, a, indent)
	case *ast.Heading:
		b.blockStart(a, "\n\n")
		h := a
		h.bold = true
		b.inlines(n, h, indent)
	case *ast.ThematicBreak:
		b.blockStart(a, "\n\n")
		b.emit("———", a)
	case *ast.FencedCodeBlock:
		b.nextPre = true
		b.blockStart(a, "\n\n")
		b.nextPre = false
		b.pre(b.lines(n), cleanLang(string(n.Language(b.src))))
	case *ast.CodeBlock:
		b.nextPre = true
		b.blockStart(a, "\n\n")
		b.nextPre = false
		b.pre(b.lines(n), "")
	case *ast.HTMLBlock:
		b.blockStart(a, "\n\n")
		t := b.lines(n)
		if n.HasClosure() {
			t += string(n.ClosureLine.Value(b.src))
		}
		b.emit(strings.TrimRight(t, "\n"), a)
	case *ast.Blockquote:
		q := a
		q.quote = true
		if depth >= maxDepth {
			b.blocks(n, q, depth, indent)
			return
		}
		b.blockStart(a, "\n\n")
		b.started = false
		b.blocks(n, q, depth+1, indent)
		b.started = true
	case *ast.List:
		b.blockStart(a, "\n\n")
		b.started = false
		b.list(n, a, depth+1, indent)
		b.started = true
	case *east.Table:
		b.nextPre = true
		b.blockStart(a, "\n\n")
		b.nextPre = false
		b.pre(b.table(n), "")
	default:
		if n.HasChildren() {
			b.blocks(n, a, depth, indent)
		}
	}
}

func (b *builder) list(l *ast.List, a attrs, depth int, indent string) {
	num := l.Start
	for it := l.FirstChild(); it != nil; it = it.NextSibling() {
		marker := "• "
		if l.IsOrdered() {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		if b.started {
			b.emit("\n", attrs{quote: a.quote})
		}
		b.started = true
		b.emit(indent+marker, a)
		inner := indent + "  "
		if depth >= maxDepth {
			inner = indent
		}
		for c := it.FirstChild(); c != nil; c = c.NextSibling() {
			first := c == it.FirstChild()
			switch c := c.(type) {
			case *ast.Paragraph, *ast.TextBlock:
				if !first {
					b.emit("\n"+inner, a)
				}
				b.inlines(c, a, inner)
			case *ast.List:
				b.started = !first
				b.list(c, a, depth+1, inner)
			default:
				b.started = !first
				b.block(c, a, depth+1, inner)
			}
			b.started = true
		}
	}
}

func (b *builder) lines(n ast.Node) string {
	var sb strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		sb.Write(seg.Value(b.src))
	}
	return sb.String()
}

func (b *builder) pre(t, lang string) {
	t = strings.TrimRight(t, "\n")
	if strings.TrimSpace(t) == "" {
		t = " "
	}
	b.add(run{text: t, pre: true, lang: lang})
}

// cleanLang keeps a code block's language only if it is a plain word.
func cleanLang(s string) string {
	if len(s) > 32 {
		return ""
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("+-_.#", r)) {
			return ""
		}
	}
	return s
}

// unescape resolves backslash escapes and character references as
// CommonMark prescribes for text.
func unescape(v []byte) string {
	v = util.UnescapePunctuations(v)
	v = util.ResolveNumericReferences(v)
	v = util.ResolveEntityNames(v)
	return sanitize(string(v))
}

func (b *builder) inlines(parent ast.Node, a attrs, indent string) {
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		b.inline(n, a, indent)
	}
}

func (b *builder) inline(n ast.Node, a attrs, indent string) {
	switch n := n.(type) {
	case *ast.Text:
		if n.IsRaw() {
			b.emit(string(n.Segment.Value(b.src)), a)
		} else {
			b.emit(unescape(n.Segment.Value(b.src)), a)
		}
		if n.SoftLineBreak() || n.HardLineBreak() {
			b.emit("\n"+indent, a)
		}
	case *ast.String:
		b.emit(sanitize(string(n.Value)), a)
	case *ast.CodeSpan:
		var sb strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				sb.Write(t.Segment.Value(b.src))
			}
		}
		c := a
		c.code = a.link == "" // Telegram: a link cannot contain code
		b.emit(strings.ReplaceAll(sb.String(), "\n", " "), c)
	case *ast.Emphasis:
		e := a
		if n.Level >= 2 {
			e.bold = true
		} else {
			e.italic = true
		}
		b.inlines(n, e, indent)
	case *east.Strikethrough:
		e := a
		e.strike = true
		b.inlines(n, e, indent)
	case *ast.Link:
		b.link(n, string(util.URLEscape(util.UnescapePunctuations(n.Destination), true)), a, indent)
	case *ast.Image:
		b.link(n, string(util.URLEscape(util.UnescapePunctuations(n.Destination), true)), a, indent)
	case *ast.AutoLink:
		u := string(n.URL(b.src))
		if n.AutoLinkType == ast.AutoLinkURL && !strings.Contains(u, "://") {
			u = "http://" + u
		}
		label := string(n.Label(b.src))
		if n.AutoLinkType == ast.AutoLinkEmail {
			b.emit(label, a)
			return
		}
		b.linkText(sanitize(string(util.URLEscape([]byte(u), false))), label, a)
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			b.emit(string(seg.Value(b.src)), a)
		}
	case *east.TaskCheckBox:
		if n.IsChecked {
			b.emit("☑ ", a)
		} else {
			b.emit("☐ ", a)
		}
	default:
		b.inlines(n, a, indent)
	}
}

// link writes a link node's children as a link to u, or as text if u is
// not allowed; an empty label shows the URL.
func (b *builder) link(n ast.Node, u string, a attrs, indent string) {
	u, ok := b.allowed(sanitize(u))
	if !ok || a.link != "" {
		b.inlines(n, a, indent)
		return
	}
	l := a
	l.link = u
	before := b.size
	b.inlines(n, l, indent)
	if b.size == before {
		b.emit(u, l)
	}
}

func (b *builder) linkText(u, label string, a attrs) {
	u, ok := b.allowed(u)
	if !ok || a.link != "" {
		b.emit(label, a)
		return
	}
	l := a
	l.link = u
	b.emit(label, l)
}

// allowed says whether u may be a link, and returns it with its scheme
// in lower case.
func (b *builder) allowed(u string) (string, bool) {
	if strings.ContainsAny(u, " \t\n") || u == "" || !utf8.ValidString(u) {
		return "", false
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(p.Scheme)
	u = scheme + u[len(p.Scheme):]
	switch scheme {
	case "http", "https":
		return u, true
	case "tg":
		return u, b.allowTG
	}
	return "", false
}

func (b *builder) table(t *east.Table) string {
	var rows [][]string
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		var row []string
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			sub := &builder{src: b.src, allowTG: b.allowTG}
			sub.inlines(c, attrs{}, "")
			sub.flush()
			var sb strings.Builder
			for _, x := range sub.out {
				sb.WriteString(x.text)
			}
			row = append(row, strings.ReplaceAll(sb.String(), "\n", " "))
		}
		rows = append(rows, row)
	}
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var sb strings.Builder
	for ri, row := range rows {
		for i, c := range row {
			if i > 0 {
				sb.WriteString(" | ")
			}
			sb.WriteString(c)
			if i < len(row)-1 {
				sb.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
			}
		}
		sb.WriteByte('\n')
		if ri == 0 {
			for i, w := range widths {
				if i > 0 {
					sb.WriteString("-+-")
				}
				sb.WriteString(strings.Repeat("-", w))
			}
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}
