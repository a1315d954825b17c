package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// The files tests (TestTelegramFiles, TestSlackFiles, TestDiscordFiles,
// TestSMSFiles, TestWhatsAppFiles, TestEmailFiles) send a document, a
// voice memo and a picture on their platform, ask for a file back, and
// check what the model read with the helpers here.

// filesTranscript is what the files model's transcription endpoint hears
// in every voice memo.
const filesTranscript = "remind me to water the plants"

// filesModel is the scripted model of the files tests. It transcribes
// every voice memo as filesTranscript and answers "got the notes" to a
// document, "noted: plants" to the transcript and "a red dot" to a
// picture; to "send me the report" it calls send_message with the
// workspace's file report for this chat, and says "sent it" once the
// tool answered; "hello" to anything else.
func filesModel(report string) *fakellm.Server {
	args, err := json.Marshal(map[string]any{"target": "this_chat", "text": "the report", "files": []string{report}})
	if err != nil {
		panic(err)
	}
	return fakellm.New(
		fakellm.WithTranscriber(func(string, []byte) string { return filesTranscript }),
		fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
			last, _ := req.LastMessage()
			text := messageText(last)
			switch {
			case last.Role == openai.ChatMessageRoleTool:
				return fakellm.TextStep("sent it")
			case strings.Contains(text, "send me the report"):
				return fakellm.ToolStep(fakellm.ToolCall{ID: "s1", Name: "send_message", Arguments: string(args)})
			case strings.Contains(text, "[image attached:"):
				return fakellm.TextStep("a red dot")
			case strings.Contains(text, "water the plants"):
				return fakellm.TextStep("noted: plants")
			case strings.Contains(text, "[document attached:"):
				return fakellm.TextStep("got the notes")
			}
			return fakellm.TextStep("hello")
		}))
}

// filesConfig is the configuration of the files tests: transcription by
// the model's server, the chats' workspace at work, and a model that
// sees pictures.
func filesConfig(modelURL, work string) string {
	return "transcription:\n  base_url: " + modelURL + "\n" +
		"sandbox:\n  workspace: " + work + "\n" +
		"models:\n  fake-model:\n    vision: true\n"
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

// voiceMemo is a voice memo as the apps record it: Ogg with an Opus
// stream.
func voiceMemo() []byte {
	voice := append([]byte("OggS\x00\x02"), make([]byte, 20)...)
	return append(voice, []byte("\x01\x13OpusHead\x01\x01 and the rest of the memo")...)
}

// wantDocument checks that a document reached the model: the last request
// with a "[document attached: PATH (...)]" line names a path in the
// workspace at work that holds data. It returns the path and the text the
// model read.
func wantDocument(t *testing.T, model *fakellm.Server, work string, data []byte) (rel, text string) {
	t.Helper()
	text = messageText(lastUserMessage(lastRequestWith(t, model, "[document attached:")))
	rel = attachedPath(t, text, "[document attached: ")
	if got, err := os.ReadFile(filepath.Join(work, rel)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the document in the workspace at %s: %q, %v", rel, got, err)
	}
	return rel, text
}

// wantTranscribed checks that voice, and nothing else, reached the
// transcription endpoint, and that its transcript is what the model read.
func wantTranscribed(t *testing.T, model *fakellm.Server, voice []byte) {
	t.Helper()
	heard := model.Transcriptions()
	if len(heard) != 1 || !bytes.Equal(heard[0].Data, voice) {
		t.Fatalf("the transcription endpoint heard %d memos", len(heard))
	}
	if text := messageText(lastUserMessage(lastRequestWith(t, model, "water the plants"))); !strings.HasPrefix(text, filesTranscript) {
		t.Fatalf("the model read %q, want the transcript", text)
	}
}

// wantPicture checks that a picture reached the model that sees: the last
// request with an "[image attached: ...]" line has the caption and the
// picture's path in the workspace as text, and the picture as an
// image_url part with its data URL.
func wantPicture(t *testing.T, model *fakellm.Server, picture []byte, caption string) {
	t.Helper()
	msg := lastUserMessage(lastRequestWith(t, model, "[image attached:"))
	if text := messageText(msg); !strings.Contains(text, caption) || !strings.Contains(text, "[image attached: uploads/") {
		t.Fatalf("the model read %q, want the caption and the picture's path", text)
	}
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(picture)
	if !slices.ContainsFunc(msg.MultiContent, func(p openai.ChatMessagePart) bool {
		return p.Type == openai.ChatMessagePartTypeImageURL && p.ImageURL != nil && p.ImageURL.URL == want
	}) {
		t.Fatalf("the picture did not reach the model as an image part: %+v", msg.MultiContent)
	}
}

// inWorkspace writes a file into the chats' workspace at work, for the
// agent to send back.
func inWorkspace(t *testing.T, work, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(work, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
