package email

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"regexp"
	"strings"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // mail in other charsets than UTF-8
	"github.com/emersion/go-message/mail"
)

// maxText bounds the text read from one mail.
const maxText = 64 << 10

// incoming is what the adapter reads of a mail.
type incoming struct {
	messageID, inReplyTo string
	references           []string
	// from is the From address, returnPath the envelope sender the
	// delivering server recorded ("" when none), both lower-case.
	from, returnPath string
	subject          string
	// why is the reason the mail is not for the agent ("" when it is).
	why string
	// text is the new text: quoted history and signature cut off.
	text string
	// files are the parts that are files (attachments, inline pictures).
	files []filePart
}

// parse reads a raw mail; authservID is the id the receiving mail server
// writes in Authentication-Results. Pure.
func parse(raw []byte, self, authservID string) (incoming, error) {
	r, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil && r == nil {
		return incoming{}, err
	}
	h := r.Header
	var in incoming
	in.messageID, _ = h.MessageID()
	if ids, _ := h.MsgIDList("In-Reply-To"); len(ids) > 0 {
		in.inReplyTo = ids[0]
	}
	in.references, _ = h.MsgIDList("References")
	in.subject, _ = h.Subject()
	if from, err := h.AddressList("From"); err == nil && len(from) == 1 {
		in.from = strings.ToLower(from[0].Address)
	}
	if rp := strings.TrimSpace(h.Get("Return-Path")); rp != "" {
		in.returnPath = strings.ToLower(strings.Trim(rp, "<> "))
		if in.returnPath == "" {
			in.returnPath = "<>"
		}
	}
	in.why = ignored(h, in, strings.ToLower(self))
	if in.why == "" && !authenticated(h.Values("Authentication-Results"), authservID, in.from) {
		in.why = "not authenticated: no dmarc=pass or dkim=pass for the From domain in " + authservID + "'s Authentication-Results"
	}
	if in.why != "" {
		return in, nil
	}
	plain, html := "", ""
	for index := 0; index < maxParts; index++ {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && (p == nil || !message.IsUnknownCharset(err)) {
			break // what was read so far stands
		}
		ct, f, isFile := partOf(p, index)
		if isFile {
			in.files = append(in.files, f)
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(p.Body, maxText))
		switch {
		case ct == "text/plain" && plain == "":
			plain = string(body)
		case ct == "text/html" && html == "":
			html = string(body)
		}
	}
	text := plain
	if text == "" && html != "" {
		md, err := htmltomarkdown.ConvertString(html)
		if err == nil {
			text = md
		}
	}
	in.text = stripQuoted(text)
	return in, nil
}

// ignored says why a mail is not for the agent: an automatic answer (RFC
// 3834's Auto-Submitted, or the usual vacation headers), mailing-list or
// bulk mail, a bounce, a From that is not the envelope's sender, or mail
// from the agent's own address; "" when it is for the agent. Pure.
func ignored(h mail.Header, in incoming, self string) string {
	switch auto := strings.ToLower(strings.TrimSpace(h.Get("Auto-Submitted"))); {
	case in.from == "":
		return "no single From address"
	case in.from == self:
		return "sent from the agent's own address"
	case auto != "" && auto != "no":
		return "an automatic message (Auto-Submitted: " + auto + ")"
	case h.Get("X-Autoreply") != "" || h.Get("X-Autorespond") != "":
		return "an automatic reply"
	case h.Get("List-Id") != "" || h.Get("List-Unsubscribe") != "" || h.Get("List-Post") != "":
		return "mailing-list mail"
	}
	switch strings.ToLower(strings.TrimSpace(h.Get("Precedence"))) {
	case "bulk", "list", "junk", "auto_reply":
		return "bulk mail (Precedence)"
	}
	switch {
	case in.returnPath == "<>":
		return "a bounce (empty envelope sender)"
	case in.returnPath != "" && in.returnPath != in.from:
		return "the envelope sender " + in.returnPath + " is not the From address"
	}
	return ""
}

// authenticated reports whether the receiving server's verdict on a mail
// (the topmost Authentication-Results it wrote, RFC 8601: results is
// that header's values, topmost first) says the From address's domain
// passed DMARC, or signed it with DKIM (its d= the domain or a parent of
// it). A header another server wrote, or the sender forged below the
// server's own, is not read. Pure.
func authenticated(results []string, authservID, from string) bool {
	_, domain, ok := strings.Cut(from, "@")
	if !ok || authservID == "" {
		return false
	}
	for _, r := range results {
		r = stripComments(r)
		parts := strings.Split(r, ";")
		id, _, _ := strings.Cut(strings.TrimSpace(parts[0]), " ")
		if !strings.EqualFold(id, authservID) {
			continue
		}
		for _, p := range parts[1:] {
			fields := strings.Fields(p)
			if len(fields) == 0 {
				continue
			}
			method, result, _ := strings.Cut(strings.ToLower(fields[0]), "=")
			if result != "pass" {
				continue
			}
			for _, f := range fields[1:] {
				k, v, _ := strings.Cut(strings.ToLower(f), "=")
				v = strings.TrimPrefix(v, "@")
				switch {
				case method == "dmarc" && k == "header.from" && v == domain:
					return true
				case method == "dkim" && (k == "header.d" || k == "header.i") && (v == domain || strings.HasSuffix(domain, "."+v) && strings.Contains(v, ".")):
					return true
				}
			}
		}
		return false // the topmost verdict of this server is the one
	}
	return false
}

// stripComments drops a header's (comments). Pure.
func stripComments(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Lines where quoted history starts: a reply's attribution ("On ... wrote:",
// also folded over two lines), Outlook's separators and header block, and
// a signature's delimiter.
var (
	attribution = regexp.MustCompile(`(?i)^(on\s.+|le\s.+|am\s.+)\s(wrote|a écrit|schrieb)\s*:\s*$`)
	outlook     = regexp.MustCompile(`(?i)^(-{3,}\s*original message\s*-{3,}|_{20,}|from:\s.+)$`)
)

// stripQuoted is a reply's new text: everything from the quoted history
// or the signature on is cut, and quoted lines ("> ...") dropped. Pure.
func stripQuoted(text string) string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []string
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if l == "-- " || l == "--" {
			break
		}
		if attribution.MatchString(t) || outlook.MatchString(t) && (!strings.HasPrefix(strings.ToLower(t), "from:") || i+1 < len(lines) && isHeaderLine(lines[i+1])) {
			break
		}
		if i+1 < len(lines) && attribution.MatchString(t+" "+strings.TrimSpace(lines[i+1])) {
			break
		}
		if strings.HasPrefix(t, ">") {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// isHeaderLine reports whether l reads as a quoted header of Outlook's
// ("Sent: ...", "Date: ...", "To: ...", "Subject: ..."). Pure.
func isHeaderLine(l string) bool {
	l = strings.ToLower(strings.TrimSpace(l))
	for _, p := range []string{"sent:", "date:", "to:", "subject:", "cc:"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// updateID is the gateway's id of a mail: a digest of its Message-ID, the
// same however often the mail is fetched. Pure.
func updateID(messageID string) string {
	sum := sha256.Sum256([]byte(messageID))
	return "m" + hex.EncodeToString(sum[:16])
}

// firstLine is text's first line without Markdown's emphasis, cut to a
// subject's length. Pure.
func firstLine(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.TrimSpace(strings.NewReplacer("**", "", "__", "", "`", "").Replace(line))
	if r := []rune(line); len(r) > 78 {
		line = string(r[:77]) + "…"
	}
	if line == "" {
		return "A message from Talaria"
	}
	return line
}

// reSubject is the subject of an answer to subject. Pure.
func reSubject(subject string) string {
	subject = strings.TrimSpace(subject)
	switch {
	case subject == "":
		return "Re: your message"
	case strings.HasPrefix(strings.ToLower(subject), "re:"):
		return subject
	}
	return "Re: " + subject
}
