package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/faketelegram"
)

// TestTelegramFiles: files both ways through the real binary. A document
// lands in the chats' workspace and the model reads its path; a voice
// memo goes to the transcription endpoint, its transcript is what the
// model reads and the sender sees it; a photo reaches a model that sees
// as an image part carrying its bytes, and again after /retry; a file the agent sends with
// send_message comes back as a document with the same bytes.
func TestTelegramFiles(t *testing.T) {
	t.Parallel()
	model := filesModel("report.txt")
	defer model.Close()
	work := t.TempDir()
	_, tg, _ := telegramServeConfig(t, model, filesConfig(model.URL(), work))
	const within = time.Minute

	// A document.
	notes := []byte("meeting notes: ship on friday\n")
	tg.SendFile(42, faketelegram.DocumentFile, "notes.txt", "text/plain", notes, "")
	waitText(t, tg, "got the notes", within)
	wantDocument(t, model, work, notes)

	// A voice memo.
	voice := voiceMemo()
	tg.SendFile(42, faketelegram.VoiceFile, "", "", voice, "")
	waitText(t, tg, "noted: plants", within)
	waitText(t, tg, filesTranscript, within) // the transcript, shown
	wantTranscribed(t, model, voice)

	// A photo with a caption.
	photo := redDot(t)
	tg.SendFile(42, faketelegram.PhotoFile, "", "", photo, "what is this?")
	waitText(t, tg, "a red dot", within)
	wantPicture(t, model, photo, "what is this?")

	// /retry asks again with the picture, not the caption alone.
	tg.Send(42, 0, "/retry")
	waitTelegram(t, tg, within, "a second answer about the photo", func(ms []faketelegram.Message) bool {
		n := 0
		for _, m := range ms {
			if m.ChatID == 42 && strings.Contains(m.Text, "a red dot") {
				n++
			}
		}
		return n == 2
	})
	wantPicture(t, model, photo, "what is this?")

	// A file back.
	report := []byte("the quarterly report\n")
	inWorkspace(t, work, "report.txt", report)
	tg.Send(42, 0, "send me the report")
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	docs, err := tg.WaitDocuments(ctx, func(d []faketelegram.Document) bool { return len(d) > 0 })
	if err != nil || docs[0].Name != "report.txt" || !bytes.Equal(docs[0].Data, report) || docs[0].ChatID != 42 {
		t.Fatalf("documents sent: %+v, %v", docs, err)
	}
	waitText(t, tg, "sent it", within)
}
