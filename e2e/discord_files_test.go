package e2e

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakediscord"
)

// TestDiscordFiles: files both ways through the real binary and Discord's
// wire protocol. A document sent in a DM lands in the chats' workspace
// with its bytes and the model reads its path; a voice message goes to
// the transcription endpoint, the model reads its transcript and the
// sender is shown it; a picture with a caption reaches the model as its
// path line beside the caption, and as an image part to a model that
// sees; a file the agent sends with send_message is uploaded to the DM
// with the same bytes. Every download went to the CDN's signed URL,
// without the bot's token.
func TestDiscordFiles(t *testing.T) {
	t.Parallel()
	model := filesModel("report.txt")
	defer model.Close()
	work := t.TempDir()
	fd := fakediscord.Start(discordToken, "talaria")
	t.Cleanup(fd.Close)
	u := newUser(t, model.URL())
	writeConfig(filesConfig(model.URL(), work))(t, u)
	u.env["DISCORD_BOT_TOKEN"] = discordToken
	u.env["DISCORD_API_URL"] = fd.URL()
	u.env["DISCORD_ALLOWED_USERS"] = "42"
	u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
	waitDiscordConnected(t, fd)
	dm := fd.DMChannel("42")
	const within = time.Minute

	// (a) A document.
	notes := []byte("meeting notes: ship the release on friday\n")
	fd.SendDMFiles("42", "", fakediscord.File{Name: "notes.txt", ContentType: "text/plain; charset=utf-8", Data: notes})
	waitDiscord(t, fd, dm, "got the notes", within)
	wantDocument(t, model, work, notes)

	// (b) A voice message.
	voice := voiceMemo()
	fd.SendVoice("42", voice, 3.2)
	waitDiscord(t, fd, dm, "noted: plants", within)
	shown := waitDiscord(t, fd, dm, "🎤 "+filesTranscript, within)
	if shown.Content != "🎤 "+filesTranscript {
		t.Errorf("the transcript shown: %q", shown.Content)
	}
	wantTranscribed(t, model, voice)

	// (c) A picture with a caption.
	picture := redDot(t)
	fd.SendDMFiles("42", "what is in this picture?", fakediscord.File{Name: "dot.png", ContentType: "image/png", Data: picture})
	waitDiscord(t, fd, dm, "a red dot", within)
	wantPicture(t, model, picture, "what is in this picture?")

	// (d) A file back.
	report := []byte("the quarterly report: all quiet\n")
	inWorkspace(t, work, "report.txt", report)
	fd.SendDM("42", "send me the report")
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	sent, err := fd.WaitSent(ctx, func(ms []fakediscord.Message) bool {
		for _, m := range ms {
			if len(m.Files) > 0 {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no file was uploaded: %v", err)
	}
	var uploaded []fakediscord.File
	for _, m := range sent {
		if len(m.Files) > 0 && m.ChannelID == dm {
			uploaded = append(uploaded, m.Files...)
		}
	}
	if len(uploaded) != 1 || uploaded[0].Name != "report.txt" || !bytes.Equal(uploaded[0].Data, report) {
		t.Fatalf("uploaded %+v", uploaded)
	}
	waitDiscord(t, fd, dm, "sent it", within)

	for _, d := range fd.Downloads() {
		if !d.Served || d.Authorization != "" {
			t.Errorf("a download of the CDN: %+v (want served at its signed URL, without the token)", d)
		}
	}
	if n := len(fd.Downloads()); n < 3 {
		t.Errorf("%d downloads, want each of the three files", n)
	}
}
