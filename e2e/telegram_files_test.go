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
	"github.com/talaria-agent/talaria/internal/faketelegram"
)

// TestTelegramFiles: files both ways through the real binary. A document
// lands in the chats' workspace and the model reads its path; a voice
// memo goes to the transcription endpoint, its transcript is what the
// model reads and the sender sees it; a photo reaches a model that sees
// as an image part carrying its bytes; a file the agent sends with
// send_message comes back as a document with the same bytes.
func TestTelegramFiles(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.WithTranscriber(func(name string, data []byte) string { return "remind me to water the plants" }),
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
	work := t.TempDir()
	u, tg, _ := telegramServeConfig(t, model, "transcription:\n  base_url: "+model.URL()+"\n"+
		"sandbox:\n  workspace: "+work+"\n"+
		"models:\n  fake-model:\n    vision: true\n")
	const within = time.Minute

	// A document.
	notes := []byte("meeting notes: ship on friday\n")
	tg.SendFile(42, faketelegram.DocumentFile, "notes.txt", "text/plain", notes, "")
	waitText(t, tg, "got the notes", within)
	docReq := lastRequestWith(t, model, "[document attached:")
	rel := attachedPath(t, messageText(lastUserMessage(docReq)), "[document attached: ")
	if got, err := os.ReadFile(filepath.Join(work, rel)); err != nil || !bytes.Equal(got, notes) {
		t.Fatalf("the document in the workspace at %s: %q, %v", rel, got, err)
	}

	// A voice memo.
	voice := append([]byte("OggS\x00\x02"), make([]byte, 20)...)
	voice = append(voice, []byte("\x01\x13OpusHead\x01\x01 and the rest of the memo")...)
	tg.SendFile(42, faketelegram.VoiceFile, "", "", voice, "")
	waitText(t, tg, "noted: plants", within)
	waitText(t, tg, "remind me to water the plants", within) // the transcript, shown
	heard := model.Transcriptions()
	if len(heard) != 1 || !bytes.Equal(heard[0].Data, voice) {
		t.Fatalf("the transcription endpoint heard %d memos", len(heard))
	}
	if text := messageText(lastUserMessage(lastRequestWith(t, model, "water the plants"))); !strings.HasPrefix(text, "remind me to water the plants") {
		t.Fatalf("the model read %q, want the transcript", text)
	}

	// A photo with a caption.
	photo := redDot(t)
	tg.SendFile(42, faketelegram.PhotoFile, "", "", photo, "what is this?")
	waitText(t, tg, "a red dot", within)
	msg := lastUserMessage(lastRequestWith(t, model, "[image attached:"))
	if !strings.Contains(messageText(msg), "what is this?") {
		t.Fatalf("the caption is not in %q", messageText(msg))
	}
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(photo)
	found := false
	for _, p := range msg.MultiContent {
		if p.Type == openai.ChatMessagePartTypeImageURL && p.ImageURL != nil && p.ImageURL.URL == want {
			found = true
		}
	}
	if !found {
		t.Fatalf("the photo did not reach the model as an image part: %+v", msg.MultiContent)
	}

	// A file back.
	report := []byte("the quarterly report\n")
	if err := os.WriteFile(filepath.Join(work, "report.txt"), report, 0o644); err != nil {
		t.Fatal(err)
	}
	tg.Send(42, 0, "send me the report")
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	docs, err := tg.WaitDocuments(ctx, func(d []faketelegram.Document) bool { return len(d) > 0 })
	if err != nil || docs[0].Name != "report.txt" || !bytes.Equal(docs[0].Data, report) || docs[0].ChatID != 42 {
		t.Fatalf("documents sent: %+v, %v", docs, err)
	}
	waitText(t, tg, "sent it", within)
	_ = u
}

// messageText is the text of a chat message, whether plain or in parts.
func messageText(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.MultiContent {
		b.WriteString(p.Text)
	}
	return b.String()
}

// lastUserMessage is the last user message of a request.
func lastUserMessage(req fakellm.Request) openai.ChatCompletionMessage {
	for i := len(req.Body.Messages) - 1; i >= 0; i-- {
		if req.Body.Messages[i].Role == openai.ChatMessageRoleUser {
			return req.Body.Messages[i]
		}
	}
	return openai.ChatCompletionMessage{}
}

// lastRequestWith is the last model request whose last user message holds
// text.
func lastRequestWith(t *testing.T, model *fakellm.Server, text string) fakellm.Request {
	t.Helper()
	reqs := model.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if strings.Contains(messageText(lastUserMessage(reqs[i])), text) {
			return reqs[i]
		}
	}
	t.Fatalf("no model request with %q", text)
	return fakellm.Request{}
}

// attachedPath is the workspace path a "[kind attached: PATH (...)]" line
// names.
func attachedPath(t *testing.T, text, prefix string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, prefix)
	path, _, ok2 := strings.Cut(rest, " (")
	if !ok || !ok2 || !strings.HasPrefix(path, "uploads/") {
		t.Fatalf("no path after %q in %q", prefix, text)
	}
	return path
}

// redDot is a real 4×4 PNG.
func redDot(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
