package e2e

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/dovecottest"
	"github.com/talaria-agent/talaria/internal/fakesmtp"
)

// TestEmailFiles: files both ways by mail, through the real binary on a
// real IMAP server. An attached document lands in the chats' workspace
// and the model reads its path; an attached voice memo goes to the
// transcription endpoint, its transcript is what the model reads and the
// sender gets it by mail; an inline picture with text reaches the model
// named by its path beside the text (and as an image part, to a model
// that sees); a file the agent sends with send_message comes back to the
// sender as an attachment, with the same bytes.
func TestEmailFiles(t *testing.T) {
	t.Parallel()
	model := filesModel("report.txt")
	defer model.Close()
	work := t.TempDir()
	_, dc, smtp, _ := emailServeConfig(t, model, filesConfig(model.URL(), work))
	const within = time.Minute

	// A document.
	notes := []byte("meeting notes: ship on friday\n")
	dc.Deliver(t, mailWithFiles("d1@example.com", "Notes", "here are my notes",
		dovecottest.File{Name: "notes.txt", MIME: "text/plain", Data: notes}))
	waitMailText(t, smtp, "got the notes", within)
	if _, text := wantDocument(t, model, work, notes); !strings.HasPrefix(text, "here are my notes") {
		t.Errorf("the mail's text is not what the model read first: %q", text)
	}

	// A voice memo, the mail's only content.
	voice := voiceMemo()
	dc.Deliver(t, mailWithFiles("v1@example.com", "Voice memo", "", dovecottest.File{Name: "memo.ogg", MIME: "audio/ogg", Data: voice}))
	waitMailText(t, smtp, "noted: plants", within)
	waitMailText(t, smtp, "🎤 "+filesTranscript, within)
	wantTranscribed(t, model, voice)

	// A picture in the text of a mail.
	photo := redDot(t)
	dc.Deliver(t, mailWithFiles("p1@example.com", "Look", "what is this?",
		dovecottest.File{Name: "dot.png", MIME: "image/png", Inline: true, ContentID: "dot@example.com", Data: photo}))
	waitMailText(t, smtp, "a red dot", within)
	wantPicture(t, model, photo, "what is this?")

	// A file back, in the thread of the mail that asked for it.
	report := []byte("the quarterly report\n")
	inWorkspace(t, work, "report.txt", report)
	dc.Deliver(t, mailWithFiles("r1@example.com", "Report", "send me the report"))
	sent := waitOne(t, "a mail with an attachment", smtp.Mail, func(m fakesmtp.Mail) bool {
		files, err := m.Attachments()
		return err == nil && len(files) > 0
	}, within)
	files, _ := sent.Attachments()
	if len(files) != 1 || files[0].Name != "report.txt" || !bytes.Equal(files[0].Data, report) {
		t.Fatalf("attachments sent: %+v", files)
	}
	// "this_chat" is the mail's thread: the file's mail answers it.
	if !slices.Equal(sent.To, []string{"alice@example.com"}) || sent.Header("Auto-Submitted") != "auto-replied" ||
		!strings.Contains(sent.Header("In-Reply-To"), "r1@example.com") || !strings.HasPrefix(sent.Header("Subject"), "Re: Report") {
		t.Errorf("the file's mail: to %v, Auto-Submitted %q, In-Reply-To %q, Subject %q", sent.To,
			sent.Header("Auto-Submitted"), sent.Header("In-Reply-To"), sent.Header("Subject"))
	}
	waitMailText(t, smtp, "sent it", within)
	waitHandled(t, dc, 4)
}

// mailWithFiles is a mail from alice to the agent, authenticated by
// mx.test, with text and files.
func mailWithFiles(id, subject, text string, files ...dovecottest.File) string {
	return dovecottest.WithFiles([]string{
		"Authentication-Results: mx.test; dmarc=pass header.from=example.com",
		"From: Alice <alice@example.com>", "To: " + agentAddress, "Subject: " + subject,
		"Message-ID: <" + id + ">", "Date: " + time.Now().Format(time.RFC1123Z),
	}, text, files...)
}

// waitMailText waits until a mail to alice has text in its text part.
func waitMailText(t *testing.T, srv *fakesmtp.Server, text string, within time.Duration) fakesmtp.Mail {
	t.Helper()
	return waitOne(t, fmt.Sprintf("mail to alice saying %q", text), srv.Mail, func(m fakesmtp.Mail) bool {
		return slices.Contains(m.To, "alice@example.com") && strings.Contains(m.Text(), text)
	}, within)
}
