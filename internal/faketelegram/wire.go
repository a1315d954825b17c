package faketelegram

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

func writeResult(w http.ResponseWriter, result any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

func writeError(w http.ResponseWriter, status int, desc string, retryAfter int) {
	body := map[string]any{"ok": false, "error_code": status, "description": desc}
	if retryAfter > 0 {
		body["parameters"] = map[string]any{"retry_after": retryAfter}
		body["description"] = fmt.Sprintf("Too Many Requests: retry after %d", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// checkEntities refuses text Telegram could not parse in its parse mode:
// for HTML, tags that are not Telegram's or are not balanced, and a bare
// '&' or '<'; for MarkdownV2, a reserved character not escaped outside
// code. It is strict where Telegram is, so a test fails where a real chat
// would show an error.
func checkEntities(text, mode string) error {
	switch mode {
	case "HTML":
		return checkHTML(text)
	case "MarkdownV2":
		return checkMarkdownV2(text)
	}
	return nil
}

var allowedTags = map[string]bool{"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true, "s": true,
	"strike": true, "del": true, "code": true, "pre": true, "a": true, "blockquote": true, "tg-spoiler": true, "span": true}

func checkHTML(text string) error {
	var stack []string
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '&':
			j := strings.IndexByte(text[i:], ';')
			if j < 0 || !validEntity(text[i:i+j+1]) {
				return fmt.Errorf("unsupported entity at byte %d", i)
			}
		case '>':
			return fmt.Errorf("unescaped '>' at byte %d", i)
		case '<':
			j := strings.IndexByte(text[i:], '>')
			if j < 0 {
				return fmt.Errorf("unclosed tag at byte %d", i)
			}
			tag := text[i+1 : i+j]
			closing := strings.HasPrefix(tag, "/")
			name := strings.TrimPrefix(tag, "/")
			if k := strings.IndexAny(name, " \t\n"); k >= 0 {
				name = name[:k]
			}
			if !allowedTags[strings.ToLower(name)] {
				return fmt.Errorf("unsupported start tag %q at byte %d", name, i)
			}
			if closing {
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return errors.New("unmatched end tag " + name)
				}
				stack = stack[:len(stack)-1]
			} else {
				stack = append(stack, name)
			}
			i += j
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed tag %s", stack[len(stack)-1])
	}
	return nil
}

func validEntity(e string) bool {
	switch e {
	case "&lt;", "&gt;", "&amp;", "&quot;":
		return true
	}
	return strings.HasPrefix(e, "&#")
}

func checkMarkdownV2(text string) error {
	const reserved = "_*[]()~`>#+-=|{}.!"
	inCode := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\\':
			i++
		case c == '`':
			inCode = !inCode
		case !inCode && strings.IndexByte(reserved, c) >= 0 && !strings.ContainsRune("_*[]()~`>|", rune(c)):
			return fmt.Errorf("character '%c' is reserved and must be escaped with the preceding '\\'", c)
		}
	}
	if inCode {
		return errors.New("can't find end of the entity starting")
	}
	return nil
}
