package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

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
	model := filesModel("report.txt")
	defer model.Close()
	wa := fakewhatsapp.Start()
	t.Cleanup(wa.Close)
	u := newUser(t, model.URL())
	work := t.TempDir()
	writeConfig(filesConfig(model.URL(), work))(t, u)
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
	if rel, _ := wantDocument(t, model, work, notes); !strings.HasSuffix(rel, "/notes.txt") {
		t.Errorf("the document was saved as %s, not by its name", rel)
	}

	// A voice note.
	voice := voiceMemo()
	waSendFile(t, wa, waAllowed, fakewhatsapp.File{Type: "audio", MIME: "audio/ogg; codecs=opus", Voice: true, Data: voice})
	waWait(t, wa, waAllowed, "noted: plants", within)
	waWait(t, wa, waAllowed, "🎤 "+filesTranscript, within)
	wantTranscribed(t, model, voice)

	// A picture with a caption.
	photo := redDot(t)
	waSendFile(t, wa, waAllowed, fakewhatsapp.File{Type: "image", MIME: "image/png", Caption: "what is this?", Data: photo})
	waWait(t, wa, waAllowed, "a red dot", within)
	wantPicture(t, model, photo, "what is this?")

	// A file back.
	report := []byte("the quarterly report\n")
	inWorkspace(t, work, "report.txt", report)
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
