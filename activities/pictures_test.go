package activities

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/testsuite"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

func textPart(s string) openai.ChatMessagePart {
	return openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: s}
}

func imagePart(url string) openai.ChatMessagePart {
	return openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: url}}
}

func TestPicturedMessage(t *testing.T) {
	t.Parallel()
	photo := turnapi.Image{ID: "ab12", MIME: "image/jpeg", Name: "photo.jpg", Path: "uploads/ab12/photo.jpg", Size: 3}
	chart := turnapi.Image{ID: "cd34", MIME: "image/png", Name: "chart.png", Path: "uploads/cd34/chart.png", Size: 5}
	remote := turnapi.Image{URL: "https://example.com/cat.png"}
	msg := models.Message{Role: "user", Content: "What is in this picture?"}
	shown := Picture{Image: photo, URL: "data:image/jpeg;base64,AAAA"}
	for _, tt := range []struct {
		name string
		m    models.Message
		pics []Picture
		sees bool
		want openai.ChatCompletionMessage
	}{
		{"no pictures: the text", msg, nil, true,
			openai.ChatCompletionMessage{Role: "user", Content: "What is in this picture?"}},
		{"a model that sees: the text, then the picture", msg, []Picture{shown}, true,
			openai.ChatCompletionMessage{Role: "user", MultiContent: []openai.ChatMessagePart{
				textPart("What is in this picture?"), imagePart("data:image/jpeg;base64,AAAA")}}},
		{"a remote picture is its address", msg, []Picture{shown, {Image: remote, URL: remote.URL}}, true,
			openai.ChatCompletionMessage{Role: "user", MultiContent: []openai.ChatMessagePart{
				textPart("What is in this picture?"), imagePart("data:image/jpeg;base64,AAAA"), imagePart("https://example.com/cat.png")}}},
		{"a picture without text", models.Message{Role: "user"}, []Picture{shown}, true,
			openai.ChatCompletionMessage{Role: "user", MultiContent: []openai.ChatMessagePart{imagePart("data:image/jpeg;base64,AAAA")}}},
		{"a model that does not see: one line", msg, []Picture{{Image: photo}}, false,
			openai.ChatCompletionMessage{Role: "user", Content: "What is in this picture?\n\n" +
				"(This model cannot see images: the 1 picture sent with this message, saved at uploads/ab12/photo.jpg, was not shown to it.)"}},
		{"a model that does not see: one line for all", msg, []Picture{{Image: photo, URL: "data:x"}, {Image: chart}, {Image: remote}}, false,
			openai.ChatCompletionMessage{Role: "user", Content: "What is in this picture?\n\n" +
				"(This model cannot see images: the 3 pictures sent with this message, uploads/ab12/photo.jpg, uploads/cd34/chart.png and https://example.com/cat.png, were not shown to it.)"}},
		{"a model that does not see, no text: the line alone", models.Message{Role: "user", Content: "  "}, []Picture{{Image: photo}, {Image: chart}}, false,
			openai.ChatCompletionMessage{Role: "user", Content: "(This model cannot see images: the 2 pictures sent with this message, saved at uploads/ab12/photo.jpg and uploads/cd34/chart.png, were not shown to it.)"}},
		{"older pictures are named, the recent one shown", msg, []Picture{{Image: chart, Old: true}, shown}, true,
			openai.ChatCompletionMessage{Role: "user", MultiContent: []openai.ChatMessagePart{
				textPart("What is in this picture?\n\n(The 1 picture sent with this message, saved at uploads/cd34/chart.png, is no longer shown: " +
					"a model call shows only the 8 most recent pictures of the conversation.)"),
				imagePart("data:image/jpeg;base64,AAAA")}}},
		{"only older pictures: a plain message", msg, []Picture{{Image: photo, Old: true}, {Image: chart, Old: true}}, true,
			openai.ChatCompletionMessage{Role: "user", Content: "What is in this picture?\n\n(The 2 pictures sent with this message, saved at uploads/ab12/photo.jpg and uploads/cd34/chart.png, are no longer shown: " +
				"a model call shows only the 8 most recent pictures of the conversation.)"}},
		{"bytes gone: a line says so", msg, []Picture{{Image: chart}, shown}, true,
			openai.ChatCompletionMessage{Role: "user", MultiContent: []openai.ChatMessagePart{
				textPart("What is in this picture?\n\n(The 1 picture sent with this message, saved at uploads/cd34/chart.png, could not be shown: its stored bytes are gone.)"),
				imagePart("data:image/jpeg;base64,AAAA")}}},
		{"every picture gone", msg, []Picture{{Image: chart}, {Image: photo}}, true,
			openai.ChatCompletionMessage{Role: "user", Content: "What is in this picture?\n\n(The 2 pictures sent with this message, saved at uploads/cd34/chart.png and uploads/ab12/photo.jpg, could not be shown: their stored bytes are gone.)"}},
		{"an endpoint that takes no address: the remote picture is named", msg, []Picture{shown, {Image: remote, NoAddress: true}}, true,
			openai.ChatCompletionMessage{Role: "user", MultiContent: []openai.ChatMessagePart{
				textPart("What is in this picture?\n\n(The 1 picture sent with this message, https://example.com/cat.png, could not be shown: " +
					"this model's endpoint takes pictures by their bytes, not by address.)"),
				imagePart("data:image/jpeg;base64,AAAA")}}},
		{"older and gone: a line each", msg, []Picture{{Image: photo, Old: true}, {Image: chart}}, true,
			openai.ChatCompletionMessage{Role: "user", Content: "What is in this picture?\n\n" +
				"(The 1 picture sent with this message, saved at uploads/ab12/photo.jpg, is no longer shown: a model call shows only the 8 most recent pictures of the conversation.)\n\n" +
				"(The 1 picture sent with this message, saved at uploads/cd34/chart.png, could not be shown: its stored bytes are gone.)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := PicturedMessage(tt.m, tt.pics, tt.sees)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("PicturedMessage =\n%+v\nwant\n%+v", got, tt.want)
			}
			if got.Content != "" && len(got.MultiContent) > 0 {
				t.Fatal("a message with both content and parts is refused by the client")
			}
		})
	}
}

func TestOldPictures(t *testing.T) {
	t.Parallel()
	with := func(n int) models.Message {
		m := models.Message{Role: "user"}
		for range n {
			m.Images = append(m.Images, turnapi.Image{ID: "x"})
		}
		return m
	}
	for _, tt := range []struct {
		name    string
		history []models.Message
		limit   int
		want    map[int]int
	}{
		{"none", nil, 8, map[int]int{}},
		{"within the limit", []models.Message{with(3), {Role: "assistant"}, with(5)}, 8, map[int]int{}},
		{"the oldest message's pictures go first", []models.Message{with(2), {Role: "assistant"}, with(8)}, 8, map[int]int{0: 2}},
		{"a message split: its first pictures are the older", []models.Message{with(4), with(3), with(3)}, 8, map[int]int{0: 2}},
		{"one message over the limit", []models.Message{with(10)}, 8, map[int]int{0: 2}},
		{"several whole messages old", []models.Message{with(1), with(1), with(1)}, 1, map[int]int{0: 1, 1: 1}},
	} {
		if got := oldPictures(tt.history, tt.limit); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: oldPictures = %v, want %v", tt.name, got, tt.want)
		}
		if got := hasPictures(tt.history); got != (len(tt.history) > 0) {
			t.Errorf("%s: hasPictures = %v", tt.name, got)
		}
	}
	if hasPictures([]models.Message{{Role: "user", Content: "no picture"}, {Role: "assistant"}}) {
		t.Error("a conversation without pictures has pictures")
	}
}

// TestPicturesLoad: the pictures a model that sees is sent are loaded
// from the store as data URLs, a remote one is its address, bytes gone
// leave a picture without URL, and a model that does not see loads
// nothing.
func TestPicturesLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	id, err := store.PutAttachment(ctx, "image/png", []byte("\x89PNG\r\n\x1a\nfake"))
	if err != nil {
		t.Fatal(err)
	}
	stored := turnapi.Image{ID: id, MIME: "image/png", Path: "uploads/x/a.png"}
	missing := turnapi.Image{ID: "0000", MIME: "image/png", Path: "uploads/y/b.png"}
	remote := turnapi.Image{URL: "https://example.com/c.png"}
	history := []models.Message{
		{Role: "user", Content: "one", Images: []turnapi.Image{stored, missing}},
		{Role: "assistant", Content: "ok"},
		{Role: "user", Content: "two", Images: []turnapi.Image{remote}},
	}
	a := &Activities{Store: store}
	got, err := a.pictures(ctx, history, pictureSight{sees: true, byAddress: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]Picture{
		0: {{Image: stored, URL: DataURL("image/png", []byte("\x89PNG\r\n\x1a\nfake"))}, {Image: missing}},
		2: {{Image: remote, URL: remote.URL}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pictures =\n%+v\nwant\n%+v", got, want)
	}
	// An endpoint that takes no address (Ollama): the remote picture is
	// named, the stored ones loaded.
	local, err := a.pictures(ctx, history, pictureSight{sees: true})
	if err != nil {
		t.Fatal(err)
	}
	if p := local[2][0]; !p.NoAddress || p.URL != "" || local[0][0].URL == "" {
		t.Fatalf("pictures for an endpoint that takes no address: %+v", local)
	}
	blind, err := a.pictures(ctx, history, pictureSight{byAddress: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, pics := range blind {
		for _, p := range pics {
			if p.URL != "" {
				t.Fatalf("message %d: a picture was loaded for a model that does not see: %+v", i, p)
			}
		}
	}
}

// imageURLs are the image_url parts of a chat completion request's raw
// body, message by message, as the wire carries them.
func imageURLs(t *testing.T, raw []byte) (urls []string, texts []string) {
	t.Helper()
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("request body: %v", err)
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
			ImageURL *struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			t.Fatalf("message content is neither text nor parts: %s", m.Content)
		}
		for _, p := range parts {
			switch p.Type {
			case "image_url":
				urls = append(urls, p.ImageURL.URL)
			case "text":
				texts = append(texts, p.Text)
			}
		}
	}
	return urls, texts
}

// TestCallModelShowsPictures: a user message with a stored picture
// reaches a model that sees as an image_url part carrying the picture's
// bytes as a data URL, after its text; a model that does not see gets the
// text and one line naming the picture, and no image part.
func TestCallModelShowsPictures(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR picture bytes")
	for _, tt := range []struct {
		name  string
		model string
		sees  func(context.Context, llm.Endpoint) bool
		shown bool
	}{
		{"the bundled table says gpt-4o sees", "gpt-4o", nil, true},
		{"the bundled table says o3-mini does not", "o3-mini", nil, false},
		{"the worker's knowledge wins", "gpt-4o", func(context.Context, llm.Endpoint) bool { return false }, false},
		{"a model nobody knows does not see", "my-own-model", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			model := fakellm.New(fakellm.WithSteps(fakellm.TextStep("A red square.")))
			defer model.Close()
			store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			if _, err := store.EnsureSession(ctx, "s", tt.model); err != nil {
				t.Fatal(err)
			}
			id, err := store.PutAttachment(ctx, "image/png", png)
			if err != nil {
				t.Fatal(err)
			}
			img := turnapi.Image{ID: id, MIME: "image/png", Name: "square.png", Path: "uploads/" + id[:12] + "/square.png", Size: int64(len(png))}
			if _, err := store.AppendMessages(ctx, []models.Message{{SessionID: "s", TurnID: "t", IdemKey: "t/user",
				Role: "user", Content: "What is this?", Images: []turnapi.Image{img}}}); err != nil {
				t.Fatal(err)
			}
			a := &Activities{Store: store, Vision: tt.sees, Providers: func(string) ([]llm.Endpoint, error) {
				return []llm.Endpoint{{BaseURL: model.URL(), APIKey: "k", Model: tt.model}}, nil
			}}
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			env.RegisterActivity(a.CallModel)
			if _, err := env.ExecuteActivity(a.CallModel, turnapi.CallModelInput{TurnID: "t", SessionID: "s", Call: 1, Model: tt.model}); err != nil {
				t.Fatalf("CallModel: %v", err)
			}
			reqs := model.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			urls, texts := imageURLs(t, reqs[0].Raw)
			note := "(This model cannot see images: the 1 picture sent with this message, saved at " + img.Path + ", was not shown to it.)"
			if tt.shown {
				if want := []string{"data:image/png;base64," + base64.StdEncoding.EncodeToString(png)}; !reflect.DeepEqual(urls, want) {
					t.Fatalf("image parts %q, want %q", urls, want)
				}
				if !slices.Contains(texts, "What is this?") {
					t.Fatalf("the text part is missing: %q", texts)
				}
				return
			}
			if len(urls) != 0 {
				t.Fatalf("a model that does not see was sent image parts: %q", urls)
			}
			if !slices.Contains(texts, "What is this?\n\n"+note) {
				t.Fatalf("texts %q lack the message with its note %q", texts, note)
			}
		})
	}
}
