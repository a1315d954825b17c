package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/fakewhatsapp"
)

// waSendFile is a message with a file from a person, retried until the
// webhook takes it.
func waSendFile(t *testing.T, wa *fakewhatsapp.Server, from string, f fakewhatsapp.File) string {
	t.Helper()
	id, _, status, err := wa.SendMedia(from, f)
	return waTaken(t, wa, id, status, err)
}

// TestWhatsAppFiles: files both ways through the real binary and the
// Cloud API's media endpoints. A document lands in the chats' workspace
// and the model reads its path; a voice note goes to the transcription
// endpoint, its transcript is what the model reads and the sender sees
// it; a picture with a caption reaches a model that sees as an image part
// and its caption and path as text; a file the agent sends with
// send_message is uploaded and sent as a document with the same bytes.
func TestWhatsAppFiles(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.WithTranscriber(func(string, []byte) string { return "remind me to water the plants" }),
		fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
			last, _ := req.LastMessage()
			text := messageText(last)
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
	wa := fakewhatsapp.Start()
	t.Cleanup(wa.Close)
	u := newUser(t, model.URL())
	work := t.TempDir()
	writeConfig("transcription:\n  base_url: "+model.URL()+"\n"+
		"sandbox:\n  workspace: "+work+"\n"+
		"models:\n  fake-model:\n    vision: true\n")(t, u)
	u.env["WHATSAPP_ACCESS_TOKEN"] = wa.AccessToken
	u.env["WHATSAPP_APP_SECRET"] = wa.AppSecret
	u.env["WHATSAPP_VERIFY_TOKEN"] = wa.VerifyToken
	u.env["WHATSAPP_PHONE_NUMBER_ID"] = wa.PhoneNumberID
	u.env["WHATSAPP_API_URL"] = wa.URL()
	u.env["WHATSAPP_ALLOWED_USERS"] = waAllowed
	port := freePort(t)
	wa.SetWebhook(fmt.Sprintf("http://127.0.0.1:%d/webhooks/whatsapp", port))
	s, _ := u.apiServeOn(port)
	const within = time.Minute

	// A document.
	notes := []byte("meeting notes: ship on friday\n")
	waSendFile(t, wa, waAllowed, fakewhatsapp.File{Type: "document", Name: "notes.txt", MIME: "text/plain", Data: notes})
	waWait(t, wa, waAllowed, "got the notes", within)
	rel := attachedPath(t, messageText(lastUserMessage(lastRequestWith(t, model, "[document attached:"))), "[document attached: ")
	if got, err := os.ReadFile(filepath.Join(work, rel)); err != nil || !bytes.Equal(got, notes) {
		t.Fatalf("the document in the workspace at %s: %q, %v", rel, got, err)
	}
	if !strings.HasSuffix(rel, "/notes.txt") {
		t.Errorf("the document was saved as %s, not by its name", rel)
	}

	// A voice note.
	voice := append([]byte("OggS\x00\x02"), make([]byte, 20)...)
	voice = append(voice, []byte("\x01\x13OpusHead\x01\x01 and the rest of the note")...)
	waSendFile(t, wa, waAllowed, fakewhatsapp.File{Type: "audio", MIME: "audio/ogg; codecs=opus", Voice: true, Data: voice})
	waWait(t, wa, waAllowed, "noted: plants", within)
	waWait(t, wa, waAllowed, "🎤 remind me to water the plants", within)
	heard := model.Transcriptions()
	if len(heard) != 1 || !bytes.Equal(heard[0].Data, voice) {
		t.Fatalf("the transcription endpoint heard %d notes", len(heard))
	}
	if text := messageText(lastUserMessage(lastRequestWith(t, model, "water the plants"))); !strings.HasPrefix(text, "remind me to water the plants") {
		t.Fatalf("the model read %q, want the transcript", text)
	}

	// A picture with a caption.
	photo := redDot(t)
	waSendFile(t, wa, waAllowed, fakewhatsapp.File{Type: "image", MIME: "image/png", Caption: "what is this?", Data: photo})
	waWait(t, wa, waAllowed, "a red dot", within)
	msg := lastUserMessage(lastRequestWith(t, model, "[image attached:"))
	if text := messageText(msg); !strings.Contains(text, "what is this?") || !strings.Contains(text, "[image attached: uploads/") {
		t.Fatalf("the caption or the picture's path is not in %q", text)
	}
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(photo)
	found := false
	for _, p := range msg.MultiContent {
		if p.Type == openai.ChatMessagePartTypeImageURL && p.ImageURL != nil && p.ImageURL.URL == want {
			found = true
		}
	}
	if !found {
		t.Fatalf("the picture did not reach the model as an image part: %+v", msg.MultiContent)
	}

	// A file back.
	report := []byte("the quarterly report\n")
	if err := os.WriteFile(filepath.Join(work, "report.txt"), report, 0o644); err != nil {
		t.Fatal(err)
	}
	waSend(t, wa, waAllowed, "send me the report")
	doc := waitOne(t, "a document to "+waAllowed, wa.Sent,
		func(m fakewhatsapp.Message) bool { return m.Type == "document" && m.To == waAllowed }, within)
	if doc.Document == nil || doc.Document.Name != "report.txt" || doc.Document.MIME != "text/plain" || !bytes.Equal(doc.Document.Data, report) {
		t.Fatalf("the document sent: %+v", doc.Document)
	}
	waWait(t, wa, waAllowed, "sent it", within)
	if log := serveOutput(s) + readLogIfAny(u, "serve"); strings.Contains(log, wa.AccessToken) || strings.Contains(log, "ship on friday") {
		t.Errorf("the log holds the access token or a file's contents")
	}
}
