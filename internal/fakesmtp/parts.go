package fakesmtp

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/emersion/go-message/mail"
)

// Attachment is a file a received message carries, as a mail client reads
// it: its name, its type and its decoded bytes.
type Attachment struct {
	Name, MIME string
	Data       []byte
}

// Header is the first value of a header field of the message ("" when it
// has none), decoded.
func (m Mail) Header(key string) string {
	r, _ := mail.CreateReader(strings.NewReader(m.Data))
	if r == nil {
		return ""
	}
	if v, err := r.Header.Text(key); err == nil {
		return v
	}
	return r.Header.Get(key)
}

// Text is the message's first text/plain part, decoded ("" when it has
// none).
func (m Mail) Text() string {
	r, _ := mail.CreateReader(strings.NewReader(m.Data))
	if r == nil {
		return ""
	}
	for {
		p, err := r.NextPart()
		if err != nil {
			return ""
		}
		if h, ok := p.Header.(*mail.InlineHeader); ok {
			if mt, _, _ := h.ContentType(); mt == "text/plain" {
				b, _ := io.ReadAll(p.Body)
				return string(b)
			}
		}
	}
}

// Attachments are the files the message carries (its parts with
// Content-Disposition: attachment), in order.
func (m Mail) Attachments() ([]Attachment, error) {
	r, err := mail.CreateReader(strings.NewReader(m.Data))
	if r == nil {
		return nil, fmt.Errorf("fakesmtp: read the message: %w", err)
	}
	var out []Attachment
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("fakesmtp: read a part: %w", err)
		}
		h, ok := p.Header.(*mail.AttachmentHeader)
		if !ok {
			continue
		}
		name, _ := h.Filename()
		mt, _, _ := h.ContentType()
		data, err := io.ReadAll(p.Body)
		if err != nil {
			return out, fmt.Errorf("fakesmtp: read %s: %w", name, err)
		}
		out = append(out, Attachment{Name: name, MIME: mt, Data: data})
	}
}
