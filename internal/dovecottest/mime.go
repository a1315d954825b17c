package dovecottest

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// File is a file a mail carries, as a mail client attaches it.
type File struct {
	Name, MIME string
	// Inline: Content-Disposition inline (a picture pasted into the
	// text), else attachment.
	Inline bool
	// ContentID is the part's Content-ID, without the angle brackets
	// ("" for none): what an HTML body's cid: links name.
	ContentID string
	Data      []byte
}

// WithFiles is a mail as a mail client sends one with files: headers (its
// lines, "Key: value", without Content-Type), then a multipart/mixed body
// of the text (text/plain, left out when empty) and each file, base64 as
// clients encode them. Lines end in "\n", as Deliver takes them. Pure.
func WithFiles(headers []string, text string, files ...File) string {
	const boundary = "talaria-test-boundary-7d1e"
	var b strings.Builder
	for _, h := range headers {
		b.WriteString(h + "\n")
	}
	b.WriteString("MIME-Version: 1.0\n")
	fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=%q\n\n", boundary)
	b.WriteString("This is a multi-part message in MIME format.\n")
	if text != "" {
		fmt.Fprintf(&b, "--%s\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n%s\n", boundary, text)
	}
	for _, f := range files {
		disposition := "attachment"
		if f.Inline {
			disposition = "inline"
		}
		fmt.Fprintf(&b, "--%s\nContent-Type: %s; name=%q\nContent-Disposition: %s; filename=%q\nContent-Transfer-Encoding: base64\n",
			boundary, f.MIME, f.Name, disposition, f.Name)
		if f.ContentID != "" {
			fmt.Fprintf(&b, "Content-ID: <%s>\n", f.ContentID)
		}
		b.WriteString("\n")
		enc := base64.StdEncoding.EncodeToString(f.Data)
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\n")
			enc = enc[76:]
		}
		b.WriteString(enc + "\n")
	}
	fmt.Fprintf(&b, "--%s--\n", boundary)
	return b.String()
}
