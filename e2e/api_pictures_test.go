package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openaisdk "github.com/openai/openai-go/v3"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// apiTestPicture is a real PNG picture: 2×2 red pixels.
func apiTestPicture(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	for x := range 2 {
		for y := range 2 {
			img.Set(x, y, color.RGBA{R: 255, A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// apiWireContent is what a chat completion request's raw body carries: the
// image_url parts' URLs and every text (a string content or a text part).
func apiWireContent(t *testing.T, raw []byte) (images, texts []string) {
	t.Helper()
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("the model's request is not JSON: %v", err)
	}
	for _, m := range body.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			texts = append(texts, s)
			continue
		}
		var parts []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			t.Fatalf("a message's content is neither text nor parts: %s", m.Content)
		}
		for _, p := range parts {
			switch p.Type {
			case "image_url":
				images = append(images, p.ImageURL.URL)
			case "text":
				texts = append(texts, p.Text)
			}
		}
	}
	return images, texts
}

// TestAPIPictures: the official OpenAI SDK sends a chat completion with a
// text part and a data: URL picture to serve's API. The picture is saved
// into the working directory; a model configured to see (models: in
// config.yaml) gets it as an image_url part carrying the same data URL,
// one configured not to see gets the text and one line naming the saved
// picture, and no image. A data: URL that is not a picture, and an
// http:// address, are 400s with a one-line error, and reach no model.
func TestAPIPictures(t *testing.T) {
	t.Parallel()
	pic := apiTestPicture(t)
	picURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pic)
	for _, sees := range []bool{true, false} {
		t.Run(fmt.Sprintf("vision %v", sees), func(t *testing.T) {
			t.Parallel()
			model := fakellm.New(fakellm.TextStep("A red dot."))
			defer model.Close()
			u := newUser(t, model.URL())
			writeConfig(fmt.Sprintf("models:\n  fake-model:\n    vision: %v\n", sees))(t, u)
			_, base := u.apiServe()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			client := sdkClient(base, testAPIKey)

			c, err := client.Chat.Completions.New(ctx, openaisdk.ChatCompletionNewParams{
				Model: "talaria",
				Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage([]openaisdk.ChatCompletionContentPartUnionParam{
					openaisdk.TextContentPart("What is in this picture?"),
					openaisdk.ImageContentPart(openaisdk.ChatCompletionContentPartImageImageURLParam{URL: picURL}),
				})},
			})
			if err != nil {
				t.Fatalf("completion with a picture: %v", err)
			}
			if len(c.Choices) != 1 || c.Choices[0].Message.Content != "A red dot." {
				t.Fatalf("completion = %+v", c.Choices)
			}

			saved, _ := filepath.Glob(filepath.Join(u.workdir, "uploads", "*", "picture.png"))
			if len(saved) != 1 {
				t.Fatalf("the picture was saved as %q, want one uploads/<digest>/picture.png", saved)
			}
			if data, err := os.ReadFile(saved[0]); err != nil || !bytes.Equal(data, pic) {
				t.Fatalf("the saved picture differs from the one sent: %v", err)
			}
			rel, _ := filepath.Rel(u.workdir, saved[0])

			reqs := model.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d model requests, want 1", len(reqs))
			}
			images, texts := apiWireContent(t, reqs[0].Raw)
			joined := strings.Join(texts, "\n")
			if !strings.Contains(joined, "What is in this picture?") || !strings.Contains(joined, "[image attached: "+rel+" (image/png, ") {
				t.Fatalf("the model was not sent the text naming the picture:\n%s", joined)
			}
			if sees {
				if len(images) != 1 || images[0] != picURL {
					t.Fatalf("a model that sees was sent images %.80q, want the picture's data URL", images)
				}
				return
			}
			if len(images) != 0 {
				t.Fatalf("a model that does not see was sent images %.80q", images)
			}
			note := "(This model cannot see images: the 1 picture sent with this message, saved at " + rel + ", was not shown to it.)"
			if !strings.Contains(joined, note) {
				t.Fatalf("the model was not told of the picture it cannot see (%q):\n%s", note, joined)
			}

			// What is not a picture is refused, with one line naming the
			// field, and starts no turn.
			for _, bad := range []struct{ name, url, says string }{
				{"text in a data URL", "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("just some text, no picture")), "not a JPEG, PNG, GIF or WebP picture"},
				{"an http address", "http://example.com/cat.png", "a data: URL or an https:// address"},
			} {
				_, err := client.Chat.Completions.New(ctx, openaisdk.ChatCompletionNewParams{
					Model: "talaria",
					Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage([]openaisdk.ChatCompletionContentPartUnionParam{
						openaisdk.TextContentPart("And this?"),
						openaisdk.ImageContentPart(openaisdk.ChatCompletionContentPartImageImageURLParam{URL: bad.url}),
					})},
				})
				var apiErr *openaisdk.Error
				if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
					t.Fatalf("%s: %v, want a 400", bad.name, err)
				}
				if apiErr.Param != "messages[0].content[1].image_url.url" || !strings.Contains(apiErr.Message, bad.says) || strings.Contains(apiErr.Message, "\n") {
					t.Fatalf("%s: param %q, message %q: want one line naming the field that says %q", bad.name, apiErr.Param, apiErr.Message, bad.says)
				}
			}
			if n := len(model.Requests()); n != 1 {
				t.Fatalf("refused requests reached the model: %d requests", n)
			}
		})
	}
}
