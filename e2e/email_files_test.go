package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/dovecottest"
	"github.com/talaria-agent/talaria/internal/fakellm"
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
	model := fakellm.New(
		fakellm.WithTranscriber(func(string, []byte) string { return "remind me to water the plants" }),
		fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
			last, _ := req.LastMessage()
			text := mailMessageText(last)
			switch {
			case last.Role == openai.ChatMessageRoleTool:
				return fakellm.TextStep("sent it")
			case strings.Contains(text, "send me the report"):
				return fakellm.ToolStep(fakellm.ToolCall{ID: "s1", Name: "send_message",
					Arguments: `{"target":"this_chat","text":"the report","files":["report.txt"]}`})
			case strings.Contains(text, "[image attached:"):
				return fakellm.TextStep("a red dot")
			case strings.Contains(text, "water the plants"):
				return fakellm.TextStep("noted: plants")
			case strings.Contains(text, "[document attached:"):
				return fakellm.TextStep("got the notes")
			}
			return fakellm.TextStep("hello")
		}))
	defer model.Close()
	work := t.TempDir()
	_, dc, smtp, _ := emailServeConfig(t, model, "transcription:\n  base_url: "+model.URL()+"\n"+
		"sandbox:\n  workspace: "+work+"\n"+
		"models:\n  fake-model:\n    vision: true\n")
	const within = time.Minute

	// A document.
	notes := []byte("meeting notes: ship on friday\n")
	dc.Deliver(t, mailWithFiles("d1@example.com", "Notes", "here are my notes",
		dovecottest.File{Name: "notes.txt", MIME: "text/plain", Data: notes}))
	waitMailText(t, smtp, "got the notes", within)
	text := mailMessageText(mailLastUser(mailRequestWith(t, model, "[document attached:")))
	rel := mailAttachedPath(t, text, "[document attached: ")
	if !strings.HasPrefix(text, "here are my notes") {
		t.Errorf("the mail's text is not what the model read first: %q", text)
	}
	if got, err := os.ReadFile(filepath.Join(work, rel)); err != nil || !bytes.Equal(got, notes) {
		t.Fatalf("the document in the workspace at %s: %q, %v", rel, got, err)
	}

	// A voice memo, the mail's only content.
	voice := append([]byte("OggS\x00\x02"), make([]byte, 20)...)
	voice = append(voice, []byte("\x01\x13OpusHead\x01\x01 and the rest of the memo")...)
	dc.Deliver(t, mailWithFiles("v1@example.com", "Voice memo", "", dovecottest.File{Name: "memo.ogg", MIME: "audio/ogg", Data: voice}))
	waitMailText(t, smtp, "noted: plants", within)
	waitMailText(t, smtp, "🎤 remind me to water the plants", within)
	heard := model.Transcriptions()
	if len(heard) != 1 || !bytes.Equal(heard[0].Data, voice) {
		t.Fatalf("the transcription endpoint heard %d memos", len(heard))
	}
	if text := mailMessageText(mailLastUser(mailRequestWith(t, model, "water the plants"))); !strings.HasPrefix(text, "remind me to water the plants") {
		t.Fatalf("the model read %q, want the transcript", text)
	}

	// A picture in the text of a mail.
	photo := mailRedDot(t)
	dc.Deliver(t, mailWithFiles("p1@example.com", "Look", "what is this?",
		dovecottest.File{Name: "dot.png", MIME: "image/png", Inline: true, ContentID: "dot@example.com", Data: photo}))
	waitMailText(t, smtp, "a red dot", within)
	msg := mailLastUser(mailRequestWith(t, model, "[image attached:"))
	if text := mailMessageText(msg); !strings.Contains(text, "what is this?") || !strings.Contains(text, "[image attached: uploads/") {
		t.Fatalf("the model read %q, want the text and the picture's path", text)
	}
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(photo)
	if !slices.ContainsFunc(msg.MultiContent, func(p openai.ChatMessagePart) bool {
		return p.Type == openai.ChatMessagePartTypeImageURL && p.ImageURL != nil && p.ImageURL.URL == want
	}) {
		t.Fatalf("the picture did not reach the model as an image part: %+v", msg.MultiContent)
	}

	// A file back, in the thread of the mail that asked for it.
	report := []byte("the quarterly report\n")
	if err := os.WriteFile(filepath.Join(work, "report.txt"), report, 0o644); err != nil {
		t.Fatal(err)
	}
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

// mailMessageText is the text of a chat message, whether plain or in
// parts.
func mailMessageText(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.MultiContent {
		b.WriteString(p.Text)
	}
	return b.String()
}

// mailLastUser is the last user message of a request.
func mailLastUser(req fakellm.Request) openai.ChatCompletionMessage {
	for i := len(req.Body.Messages) - 1; i >= 0; i-- {
		if req.Body.Messages[i].Role == openai.ChatMessageRoleUser {
			return req.Body.Messages[i]
		}
	}
	return openai.ChatCompletionMessage{}
}

// mailRequestWith is the last model request whose last user message holds
// text.
func mailRequestWith(t *testing.T, model *fakellm.Server, text string) fakellm.Request {
	t.Helper()
	reqs := model.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if strings.Contains(mailMessageText(mailLastUser(reqs[i])), text) {
			return reqs[i]
		}
	}
	t.Fatalf("no model request with %q", text)
	return fakellm.Request{}
}

// mailAttachedPath is the workspace path a "[kind attached: PATH (...)]"
// line names.
func mailAttachedPath(t *testing.T, text, prefix string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, prefix)
	path, _, ok2 := strings.Cut(rest, " (")
	if !ok || !ok2 || !strings.HasPrefix(path, "uploads/") {
		t.Fatalf("no path after %q in %q", prefix, text)
	}
	return path
}

// mailRedDot is a real 4×4 PNG.
func mailRedDot(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
