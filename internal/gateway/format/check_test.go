package format

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// checkTelegramHTML checks s against the Bot API's HTML parse mode: only
// the allowed tags, properly nested and closed, only the four entities,
// no bare < > &, and no entity nesting Telegram forbids. It returns the
// text after entity parsing.
func checkTelegramHTML(s string) (string, error) {
	var vis strings.Builder
	var stack []string
	openTag := regexp.MustCompile(`^<(b|strong|i|em|u|s|code|pre|blockquote|tg-spoiler|a href="[^"<>&]*(?:&(?:amp|lt|gt|quot);[^"<>&]*)*"|code class="language-[A-Za-z0-9+_.#-]+")>`)
	closeTag := regexp.MustCompile(`^</(b|strong|i|em|u|s|code|pre|blockquote|tg-spoiler|a)>`)
	has := func(names ...string) bool {
		for _, t := range stack {
			for _, n := range names {
				if t == n {
					return true
				}
			}
		}
		return false
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			if m := closeTag.FindStringSubmatch(s[i:]); m != nil {
				if len(stack) == 0 || stack[len(stack)-1] != m[1] {
					return "", fmt.Errorf("at %d: %s closes %v", i, m[0], stack)
				}
				stack = stack[:len(stack)-1]
				i += len(m[0])
				continue
			}
			m := openTag.FindStringSubmatch(s[i:])
			if m == nil {
				return "", fmt.Errorf("at %d: bare < or unknown tag: %.30q", i, s[i:])
			}
			name := m[1]
			if strings.HasPrefix(name, "a ") {
				name = "a"
			}
			if strings.HasPrefix(name, "code ") {
				if len(stack) == 0 || stack[len(stack)-1] != "pre" || !strings.HasSuffix(s[:i], "<pre>") {
					return "", fmt.Errorf("at %d: code with a class outside pre", i)
				}
				name = "code"
			} else if has("code", "pre") {
				return "", fmt.Errorf("at %d: %s inside code or pre", i, name)
			}
			switch name {
			case "a":
				if has("a") {
					return "", fmt.Errorf("at %d: nested link", i)
				}
			case "code", "pre":
				if name == "code" && has("a") {
					return "", fmt.Errorf("at %d: code inside a link", i)
				}
				if name == "pre" && has("a", "b", "strong", "i", "em", "u", "s", "tg-spoiler") {
					return "", fmt.Errorf("at %d: pre inside an inline entity", i)
				}
			case "blockquote":
				if has("blockquote") {
					return "", fmt.Errorf("at %d: nested blockquote", i)
				}
			}
			stack = append(stack, name)
			i += len(m[0])
		case '>':
			return "", fmt.Errorf("at %d: bare >", i)
		case '&':
			ok := false
			for e, r := range map[string]string{"&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": `"`} {
				if strings.HasPrefix(s[i:], e) {
					vis.WriteString(r)
					i += len(e)
					ok = true
					break
				}
			}
			if !ok {
				return "", fmt.Errorf("at %d: bare & or unknown entity", i)
			}
		default:
			vis.WriteByte(s[i])
			i++
		}
	}
	if len(stack) != 0 {
		return "", fmt.Errorf("unclosed %v", stack)
	}
	return vis.String(), nil
}

var slackLink = regexp.MustCompile(`^<(https?://[^\s<>|]+)\|([^<>\n]*)>`)

// checkSlack checks s as Slack mrkdwn we produced: & only in &amp; &lt;
// &gt;, < only opening an http(s) link of ours (so no mention, channel or
// special command), > only closing one or quoting a line, balanced ```
// fences and no longer run of backticks. It returns an approximation of
// the visible text: markers, quote prefixes and zero-width spaces removed.
func checkSlack(s string) (string, error) {
	var vis strings.Builder
	fences := 0
	lineStart := true
	for i := 0; i < len(s); {
		c := s[i]
		wasLineStart := lineStart
		lineStart = c == '\n'
		switch {
		case c == '&':
			ok := false
			for e, r := range map[string]string{"&lt;": "<", "&gt;": ">", "&amp;": "&"} {
				if strings.HasPrefix(s[i:], e) {
					vis.WriteString(r)
					i += len(e)
					ok = true
					break
				}
			}
			if !ok {
				return "", fmt.Errorf("at %d: bare &", i)
			}
		case c == '<':
			m := slackLink.FindStringSubmatch(s[i:])
			if m == nil || fences%2 == 1 {
				return "", fmt.Errorf("at %d: < that is not our link: %.30q", i, s[i:])
			}
			t, err := checkSlack(m[2])
			if err != nil {
				return "", fmt.Errorf("at %d: link text: %v", i, err)
			}
			vis.WriteString(t)
			i += len(m[0])
		case c == '>':
			if !wasLineStart || fences%2 == 1 {
				return "", fmt.Errorf("at %d: bare >", i)
			}
			i++
		case c == '`':
			j := i
			for j < len(s) && s[j] == '`' {
				j++
			}
			switch j - i {
			case 3:
				fences++
			case 1:
			default:
				return "", fmt.Errorf("at %d: run of %d backticks", i, j-i)
			}
			i = j
		case c == '*' || c == '_' || c == '~':
			i++
		default:
			vis.WriteByte(c)
			i++
		}
	}
	if fences%2 != 0 {
		return "", fmt.Errorf("unbalanced ``` (%d fences)", fences)
	}
	return strings.ReplaceAll(vis.String(), string(zwsp), ""), nil
}

func checkPlain(s string) (string, error) { return s, nil }

func checker(f Flavour) func(string) (string, error) {
	switch f {
	case FlavourTelegramHTML:
		return checkTelegramHTML
	case FlavourSlack:
		return checkSlack
	case FlavourDiscord:
		return checkDiscord
	}
	return checkPlain
}

// squeeze drops whitespace, for comparing visible text across splits.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
