package email

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/dovecottest"
	"github.com/talaria-agent/talaria/internal/fakesmtp"
	"github.com/talaria-agent/talaria/internal/gateway"
)

const testAddress = "agent@example.com"

// mailbox is the agent's mailbox on a real Dovecot, answering through
// the fake SMTP server.
func mailbox(t *testing.T) (*Email, *dovecottest.Server, *fakesmtp.Server) {
	t.Helper()
	dc := dovecottest.Start(t, testAddress)
	smtp, err := fakesmtp.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(smtp.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := New(ctx, Options{
		IMAP:         config.EmailIMAP{Host: dc.Host, Port: dc.Port, Username: dc.User, Security: "none"},
		IMAPPassword: dc.Password,
		SMTP:         config.SMTP{Host: smtp.Host(), Port: smtp.Port(), From: "Talaria <" + testAddress + ">", Security: "none"},
		Address:      testAddress, AuthservID: "mx.test",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.drop)
	return e, dc, smtp
}

// headers are a mail's header lines from alice, authenticated by mx.test.
func headers(id, subject string, extra ...string) []string {
	return append([]string{"Authentication-Results: mx.test; dmarc=pass header.from=example.com",
		"From: Alice <alice@example.com>", "To: " + testAddress, "Subject: " + subject, "Message-ID: <" + id + ">",
		"Date: " + time.Now().Format(time.RFC1123Z)}, extra...)
}

// pollOne polls until an update comes, and returns the first.
func pollOne(t *testing.T, e *Email) gateway.Update {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		ups, err := e.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ups) > 0 {
			return ups[0]
		}
	}
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFilesOfAMail: an allowed sender's mail on a real IMAP server (read
// with the mailbox's login) gives its text as the update's text and each
// attachment and inline picture as a file with its bytes; an audio file
// is a voice memo; a file over max is refused, and one over what the
// mailbox reads is named by the mail's header alone; an unauthenticated
// mail's files are never read.
func TestFilesOfAMail(t *testing.T) {
	t.Parallel()
	e, dc, _ := mailbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	csv := []byte("item,count\nbolts,4\n")
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR not really a picture")
	ogg := []byte("OggS\x00\x02 a voice memo")
	bin := randomBytes(t, 100<<10)
	dc.Deliver(t, dovecottest.WithFiles(headers("f1@example.com", "Files"), "Here are the files.\n\n-- \nAlice",
		dovecottest.File{Name: "stock.csv", MIME: "text/csv", Data: csv},
		dovecottest.File{Name: "photo.png", MIME: "image/png", Inline: true, ContentID: "p1@example.com", Data: png},
		dovecottest.File{Name: "memo.ogg", MIME: "audio/ogg", Data: ogg},
		dovecottest.File{Name: "blob.bin", MIME: "application/octet-stream", Data: bin}))
	u := pollOne(t, e)
	if u.Text != "Here are the files." || u.User != "alice@example.com" || u.MessageID != "f1@example.com" {
		t.Fatalf("update %+v", u)
	}
	want := []struct {
		name, mime string
		voice      bool
		data       []byte
	}{{"stock.csv", "text/csv", false, csv}, {"photo.png", "image/png", false, png}, {"memo.ogg", "audio/ogg", true, ogg},
		{"blob.bin", "application/octet-stream", false, bin}}
	if len(u.Files) != len(want) {
		t.Fatalf("%d files, want %d: %+v", len(u.Files), len(want), u.Files)
	}
	for i, w := range want {
		f := u.Files[i]
		if f.Name != w.name || f.MIME != w.mime || f.Voice != w.voice || f.Size != int64(len(w.data)) {
			t.Errorf("file %d: %s %s voice %v size %d, want %s %s %v %d", i, f.Name, f.MIME, f.Voice, f.Size, w.name, w.mime, w.voice, len(w.data))
		}
		got, err := f.Fetch(ctx, attach.DefaultLimits.Max())
		if err != nil || !bytes.Equal(got, w.data) {
			t.Errorf("%s: fetched %d bytes, %v; want its %d bytes", w.name, len(got), err, len(w.data))
		}
	}
	blob := u.Files[3]
	if _, err := blob.Fetch(ctx, blob.Size-1); !errors.Is(err, attach.ErrTooLarge) {
		t.Errorf("a file over max: %v, want ErrTooLarge", err)
	}
	if err := e.Ack(ctx, u); err != nil {
		t.Fatal(err)
	}

	// A mail over what the mailbox reads: its header alone is fetched (the
	// mail stays unseen until handled), its one file refused.
	e.maxMail = 64 << 10
	dc.Deliver(t, dovecottest.WithFiles(headers("big1@example.com", "The whole archive"), "see attached",
		dovecottest.File{Name: "archive.bin", MIME: "application/octet-stream", Data: randomBytes(t, 200<<10)}))
	u = pollOne(t, e)
	if u.Text != "" || u.MessageID != "big1@example.com" || len(u.Files) != 1 || u.Files[0].Name != "The whole archive.eml" || u.Files[0].Size < 200<<10 {
		t.Fatalf("the large mail's update %+v", u)
	}
	if _, err := u.Files[0].Fetch(ctx, attach.DefaultLimits.Max()); !errors.Is(err, attach.ErrTooLarge) || !strings.Contains(err.Error(), "the mail is") {
		t.Errorf("the large mail's file: %v, want ErrTooLarge", err)
	}
	if f := dc.Flags(t); slices.ContainsFunc(f[len(f)-1].Flags, func(s string) bool { return s == `\Seen` }) {
		t.Errorf("the large mail was read: %v", f)
	}
	if err := e.Ack(ctx, u); err != nil {
		t.Fatal(err)
	}
	e.maxMail = maxMailBytes

	// A mail its server did not authenticate: no chat, no files.
	dc.Deliver(t, dovecottest.WithFiles(slices.Delete(headers("u1@example.com", "Files"), 0, 1), "open this",
		dovecottest.File{Name: "x.csv", MIME: "text/csv", Data: csv}))
	u = pollOne(t, e)
	if u.Chat.ID != "" || len(u.Files) != 0 {
		t.Errorf("an unauthenticated mail: %+v", u)
	}
}

// TestSendFile: a file goes out as a mail in the conversation's thread
// (In-Reply-To the mail answered, References from its root, "Re:" its
// subject) with the file attached, bytes and name intact; one larger than
// a mail carries is undeliverable, and nothing is sent.
func TestSendFile(t *testing.T) {
	t.Parallel()
	e, dc, smtp := mailbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dc.Deliver(t, dovecottest.WithFiles(headers("s2@example.com", "Re: Report", "References: <s1@example.com>", "In-Reply-To: <s1@example.com>"),
		"send me the report"))
	u := pollOne(t, e)
	pdf := append([]byte("%PDF-1.4\n"), randomBytes(t, 3000)...)
	id, err := e.SendFile(ctx, gateway.Outgoing{ChatID: u.Chat.ID}, gateway.OutFile{Name: "report Q3.pdf", MIME: "application/pdf", Data: pdf})
	if err != nil {
		t.Fatal(err)
	}
	got, err := smtp.Wait(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := got[0]
	if !slices.Equal(m.To, []string{"alice@example.com"}) || m.Header("In-Reply-To") != "<s2@example.com>" ||
		m.Header("References") != "<s1@example.com> <s2@example.com>" || m.Header("Subject") != "Re: Report" ||
		m.Header("Message-ID") != "<"+id+">" || m.Header("Auto-Submitted") != "auto-replied" {
		t.Errorf("the mail's envelope and threading:\n%s", m.Data[:strings.Index(m.Data, "\r\n\r\n")])
	}
	files, err := m.Attachments()
	if err != nil || len(files) != 1 || files[0].Name != "report Q3.pdf" || files[0].MIME != "application/pdf" || !bytes.Equal(files[0].Data, pdf) {
		t.Fatalf("attachments %+v, %v", files, err)
	}
	if !strings.Contains(m.Data, "Attached: report Q3.pdf") {
		t.Errorf("the mail has no text naming the file:\n%s", m.Data)
	}

	_, err = e.SendFile(ctx, gateway.Outgoing{ChatID: u.Chat.ID}, gateway.OutFile{Name: "huge.bin", Data: make([]byte, maxSendFile+1)})
	if !errors.Is(err, gateway.ErrUndeliverable) {
		t.Errorf("a file too large to mail: %v", err)
	}
	if n := len(smtp.Mail()); n != 1 {
		t.Errorf("%d mails sent, want 1", n)
	}
}

// TestParseFiles: which parts of a mail are files. Pure.
func TestParseFiles(t *testing.T) {
	t.Parallel()
	const auth = "Authentication-Results: mx.test; dmarc=pass header.from=example.com\nFrom: alice@example.com\nMessage-ID: <p1@example.com>\n"
	for _, c := range []struct {
		name, mail string
		text       string
		files      []string // name mime
	}{
		{"no content type is text", auth + "\nplain old mail", "plain old mail", nil},
		{"html with a picture it shows", auth + "MIME-Version: 1.0\nContent-Type: multipart/related; boundary=r\n\n" +
			"--r\nContent-Type: text/html; charset=utf-8\n\n<p>See <img src=\"cid:i1\"></p>\n" +
			"--r\nContent-Type: image/jpeg\nContent-ID: <i1>\nContent-Transfer-Encoding: base64\n\n/9j/4AAQ\n--r--",
			"See ![](cid:i1)", []string{" image/jpeg"}},
		{"inline document and text file, as Apple Mail sends them", auth + "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=m\n\n" +
			"--m\nContent-Type: text/plain\n\nsee both\n" +
			"--m\nContent-Type: application/pdf; name=a.pdf\nContent-Disposition: inline; filename=a.pdf\n\n%PDF-1.4\n" +
			"--m\nContent-Type: text/plain; name=notes.txt\nContent-Disposition: inline; filename=notes.txt\n\nnotes\n" +
			"--m\nContent-Type: text/plain\nContent-Disposition: attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.txt\n\ncv\n--m--",
			"see both", []string{"a.pdf application/pdf", "notes.txt text/plain", "résumé.txt text/plain"}},
	} {
		in, err := parse([]byte(strings.ReplaceAll(c.mail, "\n", "\r\n")), testAddress, "mx.test")
		if err != nil || in.why != "" {
			t.Errorf("%s: %v %s", c.name, err, in.why)
			continue
		}
		var files []string
		for _, f := range in.files {
			files = append(files, f.name+" "+f.mime)
		}
		if in.text != c.text || !slices.Equal(files, c.files) {
			t.Errorf("%s: text %q files %q, want %q %q", c.name, in.text, files, c.text, c.files)
		}
	}
	raw := []byte(strings.ReplaceAll(auth+"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=m\n\n--m\nContent-Type: text/plain\n\nhi\n"+
		"--m\nContent-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n\nAAECAwQFBgcICQ==\n--m--", "\n", "\r\n"))
	if data, err := readPart(raw, 1, 10); err != nil || len(data) != 10 {
		t.Errorf("the part at max: %d bytes, %v", len(data), err)
	}
	if _, err := readPart(raw, 1, 9); !errors.Is(err, attach.ErrTooLarge) {
		t.Errorf("the part over max: %v", err)
	}
	if _, err := readPart(raw, 2, 10); err == nil {
		t.Error("a part that is not there was read")
	}
}
