package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakeslack"
)

// TestSlackFiles: files both ways through the real binary and Slack's
// wire protocol. A document sent in a DM lands in the chats' workspace
// with its bytes and the model reads its path; an audio clip recorded in
// Slack (a WebM, told to be audio by Slack alone) goes to the
// transcription endpoint, the model reads its transcript and the sender
// is shown it; a picture with a caption reaches the model as its path
// line beside the caption, and as an image part to a model that sees; a
// file the agent sends with send_message is uploaded into the DM with the
// same bytes. Every download carried the bot token.
func TestSlackFiles(t *testing.T) {
	t.Parallel()
	model := filesModel("report.txt")
	defer model.Close()
	work := t.TempDir()
	fs := fakeslack.Start(slackBotToken, slackAppToken, "talaria")
	t.Cleanup(fs.Close)
	u := newUser(t, model.URL())
	writeConfig(filesConfig(model.URL(), work))(t, u)
	u.env["SLACK_BOT_TOKEN"] = fs.BotToken
	u.env["SLACK_APP_TOKEN"] = fs.AppToken
	u.env["SLACK_API_URL"] = fs.URL()
	u.env["SLACK_ALLOWED_USERS"] = "U42"
	u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
	const within = time.Minute

	// (a) A document, without a caption.
	notes := []byte("minutes: the release ships on friday\n")
	fs.SendDMFiles("U42", "D42", "", fakeslack.File{Name: "minutes.txt", MIME: "text/plain", Data: notes})
	waitSlack(t, fs, "D42", "got the notes", within)
	if rel, _ := wantDocument(t, model, work, notes); !strings.HasSuffix(rel, "/minutes.txt") {
		t.Errorf("the document saved as %s", rel)
	}

	// (b) An audio clip recorded in Slack: a WebM, audio because Slack says so.
	clip := []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08" +
		"\x42\x82\x84webm\x42\x87\x81\x04\x42\x85\x81\x02\x18\x53\x80\x67 and the rest of the recording")
	fs.SendDMFiles("U42", "D42", "", fakeslack.File{Name: "audio_message.webm", MIME: "audio/webm", Data: clip, Voice: true})
	waitSlack(t, fs, "D42", "noted: plants", within)
	shown := waitSlack(t, fs, "D42", "🎤 "+filesTranscript, within)
	if shown.Text != "🎤 "+filesTranscript {
		t.Errorf("the transcript shown: %q", shown.Text)
	}
	wantTranscribed(t, model, clip)

	// (c) A picture with a caption.
	picture := redDot(t)
	fs.SendDMFiles("U42", "D42", "what is in this picture?", fakeslack.File{Name: "dot.png", MIME: "image/png", Data: picture})
	waitSlack(t, fs, "D42", "a red dot", within)
	wantPicture(t, model, picture, "what is in this picture?")

	// (d) A file back, from the chats' workspace.
	report := []byte("the quarterly report: all quiet\n")
	inWorkspace(t, work, "report.txt", report)
	fs.SendDM("U42", "D42", "send me the report")
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	ups, err := fs.WaitUploads(ctx, func(ups []fakeslack.Upload) bool { return len(ups) > 0 })
	if err != nil {
		t.Fatalf("no file was uploaded: %v", err)
	}
	if len(ups) != 1 || ups[0].Channel != "D42" || ups[0].Name != "report.txt" || !bytes.Equal(ups[0].Data, report) {
		t.Fatalf("uploaded %+v", ups)
	}
	waitSlack(t, fs, "D42", "sent it", within)

	fetches := fs.Fetches()
	for _, f := range fetches {
		if !f.Authorized {
			t.Errorf("a download without the bot token: %+v", f)
		}
	}
	if len(fetches) != 3 {
		t.Errorf("%d downloads, want one of each of the three files: %+v", len(fetches), fetches)
	}
	waitAcked(t, fs)
}
