// Package mailer sends cron results by email: Markdown rendered as a
// multipart text and HTML message, with files attached when there are
// any, through the configured SMTP server (github.com/wneessen/go-mail),
// STARTTLS required unless configured otherwise.
package mailer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/mail"
	"strings"

	gomail "github.com/wneessen/go-mail"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/talaria-agent/talaria/config"
)

// ErrNotConfigured means no SMTP server is configured.
var ErrNotConfigured = errors.New("no SMTP server is configured (delivery.smtp.host)")

// maxAddress bounds an address (RFC 5321's path limit).
const maxAddress = 254

// CheckAddress reports whether s is one bare email address (no name, no
// list, no line breaks). Pure.
func CheckAddress(s string) bool {
	if s == "" || len(s) > maxAddress || strings.ContainsAny(s, "\r\n,;<>\" ") {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == ""
}

// AddressOf is the bare address of a From line ("Talaria <bot@x.org>" is
// "bot@x.org"); "" when it has none. Pure.
func AddressOf(from string) string {
	a, err := mail.ParseAddress(from)
	if err != nil {
		return ""
	}
	return strings.ToLower(a.Address)
}

// Message is one email.
type Message struct {
	To, Subject string
	// Markdown is the body; it is sent as text and as HTML (raw HTML in it
	// is left out of the HTML part).
	Markdown string
	// MessageID is the message's id, without the angle brackets (empty:
	// a fresh one); InReplyTo and References thread it under earlier
	// messages (their ids, likewise). Auto marks an automatic answer
	// (Auto-Submitted: auto-replied, RFC 3834), which mail robots leave
	// unanswered.
	MessageID, InReplyTo string
	References           []string
	Auto                 bool
	// Files are attached after the body.
	Files []File
}

// File is a file attached to a message: its name (the receiver's name for
// it), its type and its bytes.
type File struct {
	Name, MIME string
	Data       []byte
}

// contentType is a file's type as its part's header carries it: the bare
// media type, or application/octet-stream when mt is not one. Pure.
func contentType(mt string) gomail.ContentType {
	t, _, err := mime.ParseMediaType(mt)
	if err != nil || strings.Count(t, "/") != 1 || strings.HasPrefix(t, "multipart/") {
		return "application/octet-stream"
	}
	return gomail.ContentType(t)
}

// fileName is a file's name fit for a part's header: no control
// characters, "file" when nothing is left. Pure.
func fileName(name string) string {
	name = strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, name))
	if name == "" {
		return "file"
	}
	return name
}

// Send sends m through cfg's server; password is the SMTP password (from
// the environment variable the configuration names).
func Send(ctx context.Context, cfg config.SMTP, password string, m Message) error {
	if cfg.Host == "" {
		return ErrNotConfigured
	}
	if !CheckAddress(m.To) {
		return fmt.Errorf("email: %q is not one address", m.To)
	}
	msg := gomail.NewMsg()
	if err := msg.From(cfg.From); err != nil {
		return fmt.Errorf("email: from %q: %w", cfg.From, err)
	}
	if err := msg.To(m.To); err != nil {
		return fmt.Errorf("email: to %q: %w", m.To, err)
	}
	msg.Subject(strings.Join(strings.Fields(m.Subject), " "))
	msg.SetDate()
	if m.MessageID != "" {
		msg.SetMessageIDWithValue(m.MessageID)
	} else {
		msg.SetMessageID()
	}
	if m.InReplyTo != "" {
		msg.SetGenHeader(gomail.HeaderInReplyTo, "<"+m.InReplyTo+">")
	}
	if len(m.References) > 0 {
		msg.SetGenHeader(gomail.HeaderReferences, "<"+strings.Join(m.References, "> <")+">")
	}
	if m.Auto {
		msg.SetGenHeader("Auto-Submitted", "auto-replied")
	}
	msg.SetBodyString(gomail.TypeTextPlain, m.Markdown)
	var html bytes.Buffer
	md := goldmark.New(goldmark.WithExtensions(extension.GFM)) // raw HTML is omitted by default
	if err := md.Convert([]byte(m.Markdown), &html); err == nil {
		msg.AddAlternativeString(gomail.TypeTextHTML, "<!doctype html><html><body>"+html.String()+"</body></html>")
	}
	for _, f := range m.Files {
		msg.AttachReadSeeker(fileName(f.Name), bytes.NewReader(f.Data), gomail.WithFileContentType(contentType(f.MIME)))
	}
	opts := []gomail.Option{gomail.WithTLSPolicy(gomail.TLSMandatory)}
	switch cfg.Security {
	case "tls":
		opts = []gomail.Option{gomail.WithSSL()}
	case "none":
		opts = []gomail.Option{gomail.WithTLSPolicy(gomail.NoTLS)}
	}
	if cfg.Port != 0 {
		opts = append(opts, gomail.WithPort(cfg.Port))
	}
	if cfg.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(cfg.Username), gomail.WithPassword(password))
	}
	c, err := gomail.NewClient(cfg.Host, opts...)
	if err != nil {
		return fmt.Errorf("email: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("email to %s through %s: %w", m.To, cfg.Host, err)
	}
	return nil
}
