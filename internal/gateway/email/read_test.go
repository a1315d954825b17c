package email

import (
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/gateway"
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
	const base = "Authentication-Results: mx.test; dkim=pass header.d=example.com; dmarc=pass header.from=example.com\n" +
		"From: Alice <Alice@Example.com>\nTo: agent@example.com\nSubject: Plans\nMessage-ID: <a1@example.com>\nContent-Type: text/plain; charset=utf-8"
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
		{"not authenticated", strings.Replace(base, "dkim=pass header.d=example.com; dmarc=pass", "dkim=fail header.d=example.com; dmarc=fail", 1), "approve",
			"not authenticated: no dmarc=pass or dkim=pass for the From domain in mx.test's Authentication-Results", ""},
		{"own address", strings.Replace(base, "Alice <Alice@Example.com>", "agent@example.com", 1), "loop", "sent from the agent's own address", ""},
	} {
		in, err := parse(mailOf(c.headers, c.body), "agent@example.com", "mx.test")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if in.why != c.why || in.text != c.text || in.messageID != "a1@example.com" {
			t.Errorf("%s: why %q text %q id %q, want %q %q", c.name, in.why, in.text, in.messageID, c.why, c.text)
		}
	}
	html := "Authentication-Results: mx.test; dmarc=pass header.from=example.com\nFrom: alice@example.com\nMessage-ID: <h1@example.com>\nReferences: <root@example.com> <mid@example.com>\nIn-Reply-To: <mid@example.com>\n" +
		"MIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/html; charset=utf-8\n\n<p>Use <b>blue</b>.</p><blockquote>old</blockquote>\n--b--"
	in, err := parse([]byte(strings.ReplaceAll(html, "\n", "\r\n")), "agent@example.com", "mx.test")
	if err != nil || in.text != "Use **blue**." || in.references[0] != "root@example.com" || in.inReplyTo != "mid@example.com" {
		t.Errorf("html: %q %v %q %v", in.text, in.references, in.inReplyTo, err)
	}
}

func TestCodeChoices(t *testing.T) {
	t.Parallel()
	got := gateway.CodeChoices(nil)
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

func TestAuthenticated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		results []string
		want    bool
	}{
		{"dmarc pass", []string{"mx.test; spf=pass smtp.mailfrom=example.com; dmarc=pass (p=none) header.from=example.com"}, true},
		{"dkim pass, same domain", []string{"mx.test 1; dkim=pass header.d=example.com header.s=sel"}, true},
		{"dkim pass, parent domain", []string{"mx.test; dkim=pass header.i=@example.com"}, true},
		{"dkim pass for another domain", []string{"mx.test; dkim=pass header.d=evil.example"}, false},
		{"spf pass alone", []string{"mx.test; spf=pass smtp.mailfrom=example.com"}, false},
		{"dmarc fail", []string{"mx.test; dmarc=fail header.from=example.com"}, false},
		{"another server's verdict", []string{"mx.evil.example; dmarc=pass header.from=example.com"}, false},
		{"a forged pass below the server's fail", []string{"mx.test; dmarc=fail header.from=example.com", "mx.test; dmarc=pass header.from=example.com"}, false},
		{"a comment that looks like a pass", []string{"mx.test; dmarc=fail (dmarc=pass header.from=example.com) header.from=example.com"}, false},
		{"none", nil, false},
	} {
		if got := authenticated(c.results, "mx.test", "alice@example.com"); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// The header's values come topmost first: a forged header below the
	// server's own is not the one read.
	raw := "Authentication-Results: mx.test; dmarc=fail header.from=example.com\n" +
		"Authentication-Results: mx.test; dmarc=pass header.from=example.com\n" +
		"From: alice@example.com\nMessage-ID: <f1@example.com>\nContent-Type: text/plain\n\n/approve\n"
	in, err := parse([]byte(strings.ReplaceAll(raw, "\n", "\r\n")), "agent@example.com", "mx.test")
	if err != nil || in.why == "" {
		t.Errorf("a forged pass below the server's fail was read: %+v %v", in, err)
	}
}
