package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakediscord"
	"github.com/talaria-agent/talaria/internal/fakellm"
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
	model := fakellm.New(
		fakellm.WithTranscriber(func(string, []byte) string { return "please water the plants on friday" }),
		fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
			last, _ := req.LastMessage()
			text := discordMessageText(last)
			switch {
			case last.Role == openai.ChatMessageRoleTool:
				return fakellm.TextStep("Sent the report.")
			case strings.Contains(text, "send me the report"):
				return fakellm.ToolStep(fakellm.ToolCall{ID: "send1", Name: "send_message",
					Arguments: `{"target":"this_chat","text":"The report.","files":["report.txt"]}`})
			case strings.Contains(text, "[image attached:"):
				return fakellm.TextStep("A picture with a blue dot.")
			case strings.Contains(text, "water the plants"):
				return fakellm.TextStep("Noted the memo.")
			case strings.Contains(text, "[document attached:"):
				return fakellm.TextStep("Read the document.")
			}
			return fakellm.TextStep("Hello.")
		}))
	defer model.Close()
	work := t.TempDir()
	fd := fakediscord.Start(discordToken, "talaria")
	t.Cleanup(fd.Close)
	u := newUser(t, model.URL())
	writeConfig("transcription:\n  base_url: "+model.URL()+"\n"+
		"sandbox:\n  workspace: "+work+"\n"+
		"models:\n  fake-model:\n    vision: true\n")(t, u)
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
	waitDiscord(t, fd, dm, "Read the document", within)
	text := discordMessageText(discordLastUser(discordRequestWith(t, model, "[document attached:")))
	rel := discordAttachedPath(t, text, "[document attached: ")
	if got, err := os.ReadFile(filepath.Join(work, rel)); err != nil || !bytes.Equal(got, notes) {
		t.Fatalf("the document in the workspace at %s: %q, %v", rel, got, err)
	}

	// (b) A voice message.
	voice := append([]byte("OggS\x00\x02"), make([]byte, 20)...)
	voice = append(voice, []byte("\x01\x13OpusHead\x01\x01 and the rest of the recording")...)
	fd.SendVoice("42", voice, 3.2)
	waitDiscord(t, fd, dm, "Noted the memo", within)
	shown := waitDiscord(t, fd, dm, "🎤 please water the plants on friday", within)
	if shown.Content != "🎤 please water the plants on friday" {
		t.Errorf("the transcript shown: %q", shown.Content)
	}
	heard := model.Transcriptions()
	if len(heard) != 1 || !bytes.Equal(heard[0].Data, voice) {
		t.Fatalf("the transcription endpoint heard %d memos", len(heard))
	}
	if text := discordMessageText(discordLastUser(discordRequestWith(t, model, "water the plants"))); !strings.HasPrefix(text, "please water the plants on friday") {
		t.Fatalf("the model read %q, want the transcript", text)
	}

	// (c) A picture with a caption.
	picture := blueDot(t)
	fd.SendDMFiles("42", "what is in this picture?", fakediscord.File{Name: "dot.png", ContentType: "image/png", Data: picture})
	waitDiscord(t, fd, dm, "A picture with a blue dot", within)
	msg := discordLastUser(discordRequestWith(t, model, "[image attached:"))
	if text := discordMessageText(msg); !strings.Contains(text, "what is in this picture?") || !strings.Contains(text, "[image attached: uploads/") {
		t.Fatalf("the model read %q, want the caption and the picture's path", text)
	}
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(picture)
	found := false
	for _, p := range msg.MultiContent {
		found = found || p.Type == openai.ChatMessagePartTypeImageURL && p.ImageURL != nil && p.ImageURL.URL == want
	}
	if !found {
		t.Errorf("the picture did not reach the model that sees as an image part: %+v", msg.MultiContent)
	}

	// (d) A file back.
	report := []byte("the quarterly report: all quiet\n")
	if err := os.WriteFile(filepath.Join(work, "report.txt"), report, 0o644); err != nil {
		t.Fatal(err)
	}
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
	waitDiscord(t, fd, dm, "Sent the report", within)

	for _, d := range fd.Downloads() {
		if !d.Served || d.Authorization != "" {
			t.Errorf("a download of the CDN: %+v (want served at its signed URL, without the token)", d)
		}
	}
	if n := len(fd.Downloads()); n < 3 {
		t.Errorf("%d downloads, want each of the three files", n)
	}
}

// discordMessageText is the text of a chat message, plain or in parts.
func discordMessageText(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.MultiContent {
		b.WriteString(p.Text)
	}
	return b.String()
}

// discordLastUser is the last user message of a request.
func discordLastUser(req fakellm.Request) openai.ChatCompletionMessage {
	for i := len(req.Body.Messages) - 1; i >= 0; i-- {
		if req.Body.Messages[i].Role == openai.ChatMessageRoleUser {
			return req.Body.Messages[i]
		}
	}
	return openai.ChatCompletionMessage{}
}

// discordRequestWith is the last model request whose last user message
// holds text.
func discordRequestWith(t *testing.T, model *fakellm.Server, text string) fakellm.Request {
	t.Helper()
	reqs := model.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if strings.Contains(discordMessageText(discordLastUser(reqs[i])), text) {
			return reqs[i]
		}
	}
	t.Fatalf("no model request with %q", text)
	return fakellm.Request{}
}

// discordAttachedPath is the workspace path a "[kind attached: PATH
// (...)]" line names.
func discordAttachedPath(t *testing.T, text, prefix string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, prefix)
	path, _, ok2 := strings.Cut(rest, " (")
	if !ok || !ok2 || !strings.HasPrefix(path, "uploads/") {
		t.Fatalf("no path after %q in %q", prefix, text)
	}
	return path
}

// blueDot is a real 4×4 PNG.
func blueDot(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(2, 2, color.RGBA{0, 0, 255, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
