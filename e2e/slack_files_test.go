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

	"github.com/talaria-agent/talaria/internal/fakellm"
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
	model := fakellm.New(
		fakellm.WithTranscriber(func(string, []byte) string { return "please book the meeting room for tuesday" }),
		fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
			last, _ := req.LastMessage()
			text := slackMessageText(last)
			switch {
			case last.Role == openai.ChatMessageRoleTool:
				return fakellm.TextStep("Sent the report.")
			case strings.Contains(text, "send me the report"):
				return fakellm.ToolStep(fakellm.ToolCall{ID: "send1", Name: "send_message",
					Arguments: `{"target":"this_chat","text":"The report.","files":["report.txt"]}`})
			case strings.Contains(text, "[image attached:"):
				return fakellm.TextStep("A picture of a red square.")
			case strings.Contains(text, "meeting room"):
				return fakellm.TextStep("Booked, in words.")
			case strings.Contains(text, "[document attached:"):
				return fakellm.TextStep("Read the document.")
			}
			return fakellm.TextStep("Hello.")
		}))
	defer model.Close()
	work := t.TempDir()
	fs := fakeslack.Start(slackBotToken, slackAppToken, "talaria")
	t.Cleanup(fs.Close)
	u := newUser(t, model.URL())
	writeConfig("transcription:\n  base_url: "+model.URL()+"\n"+
		"sandbox:\n  workspace: "+work+"\n"+
		"models:\n  fake-model:\n    vision: true\n")(t, u)
	u.env["SLACK_BOT_TOKEN"] = fs.BotToken
	u.env["SLACK_APP_TOKEN"] = fs.AppToken
	u.env["SLACK_API_URL"] = fs.URL()
	u.env["SLACK_ALLOWED_USERS"] = "U42"
	u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
	const within = time.Minute

	// (a) A document, without a caption.
	notes := []byte("minutes: the release ships on friday\n")
	fs.SendDMFiles("U42", "D42", "", fakeslack.File{Name: "minutes.txt", MIME: "text/plain", Data: notes})
	waitSlack(t, fs, "D42", "Read the document", within)
	text := slackMessageText(slackLastUser(slackRequestWith(t, model, "[document attached:")))
	rel := slackAttachedPath(t, text, "[document attached: ")
	if got, err := os.ReadFile(filepath.Join(work, rel)); err != nil || !bytes.Equal(got, notes) {
		t.Fatalf("the document in the workspace at %s: %q, %v", rel, got, err)
	}
	if !strings.HasSuffix(rel, "/minutes.txt") {
		t.Errorf("the document saved as %s", rel)
	}

	// (b) An audio clip recorded in Slack: a WebM, audio because Slack says so.
	clip := []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08" +
		"\x42\x82\x84webm\x42\x87\x81\x04\x42\x85\x81\x02\x18\x53\x80\x67 and the rest of the recording")
	fs.SendDMFiles("U42", "D42", "", fakeslack.File{Name: "audio_message.webm", MIME: "audio/webm", Data: clip, Voice: true})
	waitSlack(t, fs, "D42", "Booked, in words", within)
	shown := waitSlack(t, fs, "D42", "🎤 please book the meeting room for tuesday", within)
	if shown.Text != "🎤 please book the meeting room for tuesday" {
		t.Errorf("the transcript shown: %q", shown.Text)
	}
	heard := model.Transcriptions()
	if len(heard) != 1 || !bytes.Equal(heard[0].Data, clip) {
		t.Fatalf("the transcription endpoint heard %d clips", len(heard))
	}
	if text := slackMessageText(slackLastUser(slackRequestWith(t, model, "meeting room"))); !strings.HasPrefix(text, "please book the meeting room for tuesday") {
		t.Fatalf("the model read %q, want the transcript", text)
	}

	// (c) A picture with a caption.
	picture := slackRedSquare(t)
	fs.SendDMFiles("U42", "D42", "what is in this picture?", fakeslack.File{Name: "square.png", MIME: "image/png", Data: picture})
	waitSlack(t, fs, "D42", "A picture of a red square", within)
	msg := slackLastUser(slackRequestWith(t, model, "[image attached:"))
	if text := slackMessageText(msg); !strings.Contains(text, "what is in this picture?") || !strings.Contains(text, "[image attached: uploads/") {
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

	// (d) A file back, from the chats' workspace.
	report := []byte("the quarterly report: all quiet\n")
	if err := os.WriteFile(filepath.Join(work, "report.txt"), report, 0o644); err != nil {
		t.Fatal(err)
	}
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
	waitSlack(t, fs, "D42", "Sent the report", within)

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

// slackMessageText is the text of a chat message, plain or in parts.
func slackMessageText(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.MultiContent {
		b.WriteString(p.Text)
	}
	return b.String()
}

// slackLastUser is the last user message of a request.
func slackLastUser(req fakellm.Request) openai.ChatCompletionMessage {
	for i := len(req.Body.Messages) - 1; i >= 0; i-- {
		if req.Body.Messages[i].Role == openai.ChatMessageRoleUser {
			return req.Body.Messages[i]
		}
	}
	return openai.ChatCompletionMessage{}
}

// slackRequestWith is the last model request whose last user message
// holds text.
func slackRequestWith(t *testing.T, model *fakellm.Server, text string) fakellm.Request {
	t.Helper()
	reqs := model.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if strings.Contains(slackMessageText(slackLastUser(reqs[i])), text) {
			return reqs[i]
		}
	}
	t.Fatalf("no model request with %q", text)
	return fakellm.Request{}
}

// slackAttachedPath is the workspace path a "[kind attached: PATH (...)]"
// line names.
func slackAttachedPath(t *testing.T, text, prefix string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, prefix)
	path, _, ok2 := strings.Cut(rest, " (")
	if !ok || !ok2 || !strings.HasPrefix(path, "uploads/") {
		t.Fatalf("no path after %q in %q", prefix, text)
	}
	return path
}

// slackRedSquare is a real 4×4 PNG.
func slackRedSquare(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for x := range 4 {
		for y := range 4 {
			img.Set(x, y, color.RGBA{255, 0, 0, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
