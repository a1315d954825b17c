package email

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/internal/mailer"
)

// Bounds of the files of a mail.
const (
	maxParts = 256 // parts of one mail read; the rest are left out
	// maxSendFile bounds a file sent: base64 makes it about 25 MB, what
	// most mail servers take in one message.
	maxSendFile = 18 << 20
)

// filePart is a part of a mail that is a file: its place among the mail's
// parts (as mail.Reader.NextPart walks them), the sender's name and type
// for it, and its size once decoded.
type filePart struct {
	index      int
	name, mime string
	size       int64
}

// partOf reads one part of a mail: its type, and whether it is a file
// (an attachment; or inline, and a picture or anything else that is not a
// text, or a text with a file name) rather than the mail's text. A file's
// body is read through to count its size; a text's is left to be read.
// A part without a Content-Type is text/plain (RFC 2045).
func partOf(p *mail.Part, index int) (string, filePart, bool) {
	var h message.Header
	switch ph := p.Header.(type) {
	case *mail.InlineHeader:
		h = ph.Header
	case *mail.AttachmentHeader:
		h = ph.Header
	default:
		return "", filePart{}, false
	}
	mt, typeParams := "text/plain", map[string]string(nil)
	if h.Get("Content-Type") != "" {
		t, params, err := h.ContentType()
		mt, typeParams = strings.ToLower(t), params
		if err != nil || !strings.Contains(mt, "/") {
			mt = "application/octet-stream"
		}
	}
	disposition, dispParams, _ := h.ContentDisposition()
	name := dispParams["filename"]
	if name == "" {
		name = typeParams["name"]
	}
	text := strings.HasPrefix(mt, "text/")
	if !strings.EqualFold(disposition, "attachment") && text && name == "" {
		return mt, filePart{}, false // the mail's text (or a text beside it)
	}
	size, _ := io.Copy(io.Discard, p.Body)
	return mt, filePart{index: index, name: name, mime: mt, size: size}, true
}

// filesOf are a mail's files: each fetched from raw, the mail's bytes
// already read, when it is asked for. An audio file is a voice memo.
func filesOf(raw []byte, parts []filePart) []gateway.File {
	out := make([]gateway.File, 0, len(parts))
	for _, p := range parts {
		out = append(out, gateway.File{Name: p.name, MIME: p.mime, Size: p.size, Voice: strings.HasPrefix(p.mime, "audio/"),
			Fetch: func(ctx context.Context, max int64) ([]byte, error) {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				if p.size > max {
					return nil, fmt.Errorf("%w: %s, at most %s", attach.ErrTooLarge, attach.HumanSize(p.size), attach.HumanSize(max))
				}
				return readPart(raw, p.index, max)
			}})
	}
	return out
}

// readPart decodes the part at index of a mail, at most max bytes: a
// larger one is attach.ErrTooLarge, read no further. Pure.
func readPart(raw []byte, index int, max int64) ([]byte, error) {
	r, err := mail.CreateReader(bytes.NewReader(raw))
	if r == nil {
		return nil, fmt.Errorf("email: read the mail: %w", err)
	}
	for i := 0; i <= index; i++ {
		p, err := r.NextPart()
		if err != nil && (p == nil || !message.IsUnknownCharset(err)) {
			if errors.Is(err, io.EOF) {
				err = errors.New("the mail has no such part")
			}
			return nil, fmt.Errorf("email: find part %d: %w", index, err)
		}
		if i < index {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(p.Body, max+1))
		if err != nil {
			return nil, fmt.Errorf("email: decode part %d: %w", index, err)
		}
		if int64(len(data)) > max {
			return nil, fmt.Errorf("%w: over %s", attach.ErrTooLarge, attach.HumanSize(max))
		}
		return data, nil
	}
	return nil, fmt.Errorf("email: find part %d: the mail has no such part", index)
}

// tooLarge is the one file of a mail too large to read: the mail itself,
// named by its subject, which is never fetched.
func tooLarge(subject string, size, limit int64) gateway.File {
	name := strings.Join(strings.Fields(subject), " ")
	if name == "" {
		name = "mail"
	}
	return gateway.File{Name: name + ".eml", MIME: "message/rfc822", Size: size,
		Fetch: func(context.Context, int64) ([]byte, error) {
			return nil, fmt.Errorf("%w: the mail is %s, at most %s are read", attach.ErrTooLarge, attach.HumanSize(size), attach.HumanSize(limit))
		}}
}

// SendFile mails a file to the chat's address as an attachment, threaded
// under its latest mail as the answers are; m's text, if any, is the
// mail's text. A file larger than mail servers take is undeliverable.
func (e *Email) SendFile(ctx context.Context, m gateway.Outgoing, f gateway.OutFile) (string, error) {
	if len(f.Data) > maxSendFile {
		return "", fmt.Errorf("%w: %s is %s, a mail carries at most %s", gateway.ErrUndeliverable, f.Name, attach.HumanSize(int64(len(f.Data))), attach.HumanSize(maxSendFile))
	}
	t, err := e.threadOf(m)
	if err != nil {
		return "", err
	}
	body := strings.TrimSpace(m.Text)
	if body == "" {
		body = "Attached: " + f.Name
	}
	if t.root == "" { // not an answer: a delivery, under the file's name
		t.subject = f.Name
	}
	id := newMessageID(e.o.Address)
	err = mailer.Send(ctx, e.o.SMTP, e.o.SMTPPassword, mailer.Message{To: t.to, Subject: t.subject, Markdown: body,
		MessageID: id, InReplyTo: t.inReplyTo, References: t.refs, Auto: true,
		Files: []mailer.File{{Name: f.Name, MIME: f.MIME, Data: f.Data}}})
	if err != nil {
		return "", err
	}
	return id, nil
}
