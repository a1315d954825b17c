package mailer

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakesmtp"
)

func TestCheckAddress(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"ops@example.com": true, "a.b+c@sub.example.org": true,
		"": false, "ops": false, "Ops <ops@example.com>": false, "a@x.com,b@x.com": false,
		"a@x.com\r\nBcc: e@evil.com": false, "a b@x.com": false, strings.Repeat("a", 250) + "@x.com": false,
	} {
		if got := CheckAddress(s); got != want {
			t.Errorf("CheckAddress(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestSend: a Markdown report reaches a real SMTP server as one
// multipart message with a text and an HTML part, raw HTML left out.
func TestSend(t *testing.T) {
	t.Parallel()
	srv, err := fakesmtp.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := config.SMTP{Host: srv.Host(), Port: srv.Port(), From: "Talaria <bot@example.com>", Security: "none"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = Send(ctx, cfg, "", Message{To: "ops@example.com", Subject: "alerts —\r\nBcc: x@evil.com 2026-12-01",
		Markdown: "# Overnight\n\nAll **quiet**. <script>alert(1)</script>"})
	if err != nil {
		t.Fatal(err)
	}
	mail, err := srv.Wait(ctx, 1)
	if err != nil || len(mail) != 1 {
		t.Fatalf("mail %+v %v", mail, err)
	}
	m := mail[0]
	if m.From != "bot@example.com" || len(m.To) != 1 || m.To[0] != "ops@example.com" {
		t.Errorf("envelope %s → %v", m.From, m.To)
	}
	for _, want := range []string{"multipart/alternative", "text/plain", "text/html", "<strong>quiet</strong>", "Subject: =?UTF-8?q?alerts_=E2=80=94_Bcc:"} {
		if !strings.Contains(m.Data, want) {
			t.Errorf("the message lacks %q:\n%s", want, m.Data)
		}
	}
	if strings.Contains(m.Data, "\r\nBcc:") || strings.Contains(strings.SplitN(m.Data, "text/html", 2)[1], "<script>") {
		t.Errorf("header injection or raw HTML in the message:\n%s", m.Data)
	}
	if err := Send(ctx, config.SMTP{}, "", Message{To: "ops@example.com"}); err != ErrNotConfigured {
		t.Errorf("without a server: %v", err)
	}
}

// TestSendFiles: files ride as attachments after the text and HTML, their
// bytes intact; a name or type that would break the part's header is
// made harmless.
func TestSendFiles(t *testing.T) {
	t.Parallel()
	srv, err := fakesmtp.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := config.SMTP{Host: srv.Host(), Port: srv.Port(), From: "bot@example.com", Security: "none"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	data := []byte("%PDF-1.4\n\x00\x01\x02 binary")
	err = Send(ctx, cfg, "", Message{To: "ops@example.com", Subject: "files", Markdown: "Two **files**.", Files: []File{
		{Name: "report.pdf", MIME: "application/pdf", Data: data},
		{Name: "evil\r\nBcc: x@evil.com.txt", MIME: "text/plain\r\nBcc: x@evil.com", Data: []byte("hi")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := srv.Wait(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	files, err := got[0].Attachments()
	if err != nil || len(files) != 2 {
		t.Fatalf("attachments %+v, %v", files, err)
	}
	if files[0].Name != "report.pdf" || files[0].MIME != "application/pdf" || !bytes.Equal(files[0].Data, data) {
		t.Errorf("the first file: %+v", files[0])
	}
	if files[1].Name != "evilBcc_ x@evil.com.txt" || files[1].MIME != "application/octet-stream" || string(files[1].Data) != "hi" {
		t.Errorf("the second file: %+v", files[1])
	}
	if strings.Contains(got[0].Data, "\r\nBcc:") || !strings.Contains(got[0].Data, "<strong>files</strong>") {
		t.Errorf("header injection, or no HTML:\n%s", got[0].Data)
	}
}
