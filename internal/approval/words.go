package approval

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// word is a shell word as the rules read it: its text after quote
// removal, and whether the shell gives exactly that text.
type word struct {
	s     string
	exact bool
}

// decode reads a word without running anything: quotes are removed and
// $'...' is decoded. A plain parameter stays as its name ($HOME, so that
// the path rules know it); anything else the shell works out ($(...),
// ${x:-y}, $((...)), brace expansion) shows as "$_". Either makes the
// word inexact. Unquoted glob characters and a leading ~ stay as they are:
// the path rules read them.
func decode(w *syntax.Word) word {
	var b strings.Builder
	exact := true
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			b.WriteString(singleQuoted(p))
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescape(l.Value, true))
				} else {
					b.WriteString(paramText(q))
					exact = false
				}
			}
		default:
			b.WriteString(paramText(p))
			exact = false
		}
	}
	c := *w
	if syntax.SplitBraces(&c) {
		exact = false
	}
	return word{b.String(), exact}
}

// decodeAll decodes words.
func decodeAll(ws []*syntax.Word) []word {
	out := make([]word, len(ws))
	for i, w := range ws {
		out[i] = decode(w)
	}
	return out
}

// paramText is how an expansion shows in a decoded word: $NAME for a
// plain parameter, else $_.
func paramText(p syntax.WordPart) string {
	if pe, ok := p.(*syntax.ParamExp); ok && pe.Param != nil && pe.Exp == nil && pe.Repl == nil &&
		pe.Slice == nil && pe.Index == nil && !pe.Length && !pe.Excl && !pe.Width {
		return "$" + pe.Param.Value
	}
	return "$_"
}

// singleQuoted is the text of '...', or of $'...' decoded.
func singleQuoted(p *syntax.SglQuoted) string {
	if !p.Dollar {
		return p.Value
	}
	s, err := expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{p}})
	if err != nil {
		return "$_"
	}
	return s
}

// unescape removes the backslashes of unquoted text (quoted: inside double
// quotes, where only \$ \` \" \\ and a line continuation are escapes).
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++
		case !quoted || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// texts are the decoded words' texts.
func texts(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.s
	}
	return out
}
