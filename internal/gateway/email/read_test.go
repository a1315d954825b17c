package email

import (
	"strings"
	"testing"
)

func TestStripQuoted(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"plain", "Hello there.\n\nSecond paragraph.", "Hello there.\n\nSecond paragraph."},
		{"gmail attribution", "Yes, do it.\n\nOn Mon, 7 Dec 2026 at 10:00, Talaria <agent@example.com> wrote:\n> Shall I?\n", "Yes, do it."},
		{"attribution folded over two lines", "Yes.\n\nOn Mon, 7 Dec 2026 at 10:00, Talaria <agent@example.com>\nwrote:\n> Shall I?", "Yes."},
		{"quoted lines inline", "> you said\nI say this.\n> more", "I say this."},
		{"signature", "Thanks!\n-- \nAlice\nACME Corp", "Thanks!"},
		{"outlook separator", "Fine.\n\n-----Original Message-----\nFrom: Talaria\nSent: Monday", "Fine."},
		{"outlook header block", "Fine.\n\nFrom: Talaria <agent@example.com>\nSent: Monday, 7 December 2026\nTo: Alice", "Fine."},
		{"a From line that is not a header block", "From: the top, please\nthanks", "From: the top, please\nthanks"},
		{"french", "D'accord.\n\nLe lun. 7 déc. 2026, Talaria a écrit :\n> ?", "D'accord."},
		{"crlf", "Hi\r\n\r\nOn Mon, X wrote:\r\n> a", "Hi"},
	} {
		if got := stripQuoted(c.in); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func mailOf(headers, body string) []byte {
	return []byte(strings.ReplaceAll(headers+"\n\n"+body, "\n", "\r\n"))
}

func TestParse(t *testing.T) {
	t.Parallel()
	const base = "From: Alice <Alice@Example.com>\nTo: agent@example.com\nSubject: Plans\nMessage-ID: <a1@example.com>\nContent-Type: text/plain; charset=utf-8"
	for _, c := range []struct {
		name, headers, body string
		why                 string
		text                string
	}{
		{"plain", base, "What is the plan?", "", "What is the plan?"},
		{"auto-reply", base + "\nAuto-Submitted: auto-replied", "I am away.", "an automatic message (Auto-Submitted: auto-replied)", ""},
		{"auto-submitted no", base + "\nAuto-Submitted: no", "Hi", "", "Hi"},
		{"vacation header", base + "\nX-Autoreply: yes", "away", "an automatic reply", ""},
		{"list", base + "\nList-Id: <dev.lists.example.com>", "digest", "mailing-list mail", ""},
		{"bulk", base + "\nPrecedence: bulk", "news", "bulk mail (Precedence)", ""},
		{"bounce", base + "\nReturn-Path: <>", "undeliverable", "a bounce (empty envelope sender)", ""},
		{"envelope mismatch", base + "\nReturn-Path: <mallory@evil.example>", "approve", "the envelope sender mallory@evil.example is not the From address", ""},
		{"envelope matches", base + "\nReturn-Path: <alice@example.com>", "Hi", "", "Hi"},
		{"own address", strings.Replace(base, "Alice <Alice@Example.com>", "agent@example.com", 1), "loop", "sent from the agent's own address", ""},
	} {
		in, err := parse(mailOf(c.headers, c.body), "agent@example.com")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if in.why != c.why || in.text != c.text || in.messageID != "a1@example.com" {
			t.Errorf("%s: why %q text %q id %q, want %q %q", c.name, in.why, in.text, in.messageID, c.why, c.text)
		}
	}
	html := "From: alice@example.com\nMessage-ID: <h1@example.com>\nReferences: <root@example.com> <mid@example.com>\nIn-Reply-To: <mid@example.com>\n" +
		"MIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/html; charset=utf-8\n\n<p>Use <b>blue</b>.</p><blockquote>old</blockquote>\n--b--"
	in, err := parse([]byte(strings.ReplaceAll(html, "\n", "\r\n")), "agent@example.com")
	if err != nil || in.text != "Use **blue**." || in.references[0] != "root@example.com" || in.inReplyTo != "mid@example.com" {
		t.Errorf("html: %q %v %q %v", in.text, in.references, in.inReplyTo, err)
	}
}

func TestCodeChoices(t *testing.T) {
	t.Parallel()
	got := codeChoices(nil)
	if got != "" {
		t.Errorf("no buttons: %q", got)
	}
	if ChatID("a@b.c", "x:y z@h") != "a@b.c:x_y_z@h" {
		t.Error(ChatID("a@b.c", "x:y z@h"))
	}
	if a, r := splitChat(ChatID("a@b.c", "r@h")); a != "a@b.c" || r != "r@h" {
		t.Error(a, r)
	}
	if reSubject("Re: x") != "Re: x" || reSubject("x") != "Re: x" || reSubject("") != "Re: your message" {
		t.Error("reSubject")
	}
	if firstLine("**alerts — 2026-12-07 04:00**\n\nall quiet") != "alerts — 2026-12-07 04:00" {
		t.Error(firstLine("**alerts**"))
	}
}
