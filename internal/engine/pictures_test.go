package engine

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/modelinfo"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

// sentPictures are the image URLs and the texts of the user messages of
// a request the fake model received, whatever its wire format.
func sentPictures(r fakellm.Request) (urls, texts []string) {
	for _, m := range r.Body.Messages {
		if m.Role != openai.ChatMessageRoleUser {
			continue
		}
		if m.Content != "" {
			texts = append(texts, m.Content)
		}
		for _, p := range m.MultiContent {
			switch {
			case p.Type == openai.ChatMessagePartTypeImageURL && p.ImageURL != nil:
				urls = append(urls, p.ImageURL.URL)
			case p.Type == openai.ChatMessagePartTypeText:
				texts = append(texts, p.Text)
			}
		}
	}
	return urls, texts
}

// TestTurnShowsPictures: a turn whose message carries a stored picture
// shows it to a model the configuration says sees, as an image part with
// the picture's bytes (in each wire format), and a model configured
// without vision gets the message's text with one line naming the picture
// and no image.
func TestTurnShowsPictures(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR a red square")
	for _, tt := range []struct {
		name   string
		wire   llm.Wire
		vision bool
	}{
		{"chat completions, a model that sees", llm.WireOpenAI, true},
		{"anthropic, a model that sees", llm.WireAnthropic, true},
		{"chat completions, a model that does not see", llm.WireOpenAI, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := newWireRun(t, tt.wire, []fakellm.Step{fakellm.TextStep("A red square.")}, func(c *config.Config, _ *Options) {
				c.Models = map[string]modelinfo.Info{fakellm.DefaultModel: {Vision: modelinfo.Bool(tt.vision)}}
			})
			id, err := l.rt.Store.PutAttachment(context.Background(), "image/png", png)
			if err != nil {
				t.Fatal(err)
			}
			img := turnapi.Image{ID: id, MIME: "image/png", Name: "square.png", Path: "uploads/" + id[:12] + "/square.png", Size: int64(len(png))}
			res := l.turn("pictures", "What is this?", func(in *workflows.TurnInput) { in.Images = []turnapi.Image{img} })
			expect(t, res, workflows.StopTextResponse, true, false, 1)

			stored := l.transcript("pictures")
			if len(stored) == 0 || len(stored[0].Images) != 1 || stored[0].Images[0] != img {
				t.Fatalf("the user message is stored without its picture: %+v", stored)
			}
			reqs := l.model.Requests()
			urls, texts := sentPictures(reqs[0])
			if tt.vision {
				want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
				if !slices.Equal(urls, []string{want}) {
					t.Fatalf("image parts %q, want the stored picture", urls)
				}
				if !slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, "What is this?") }) {
					t.Fatalf("the text was not sent with the picture: %q", texts)
				}
				return
			}
			if len(urls) != 0 {
				t.Fatalf("a model configured without vision was sent pictures: %q", urls)
			}
			note := "(This model cannot see images: the 1 picture sent with this message, saved at " + img.Path + ", was not shown to it.)"
			if !slices.Contains(texts, "What is this?\n\n"+note) {
				t.Fatalf("texts %q lack the message with its one-line note", texts)
			}
		})
	}
}
