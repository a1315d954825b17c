package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/modelinfo"
)

// Pictures by content: the first bytes of each format (what a sniffer
// reads), then anything.
var (
	pngBytes  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00 a picture")
	jpegBytes = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00 a photo")
	pdfBytes  = []byte("%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n")
	// refusedPNG is a picture only runs that are refused carry.
	refusedPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00 refused")
)

// dataURL is data as a base64 data: URL of type mime.
func dataURL(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

func TestReadPicture(t *testing.T) {
	t.Parallel()
	const param = "messages[0].content[1].image_url.url"
	for _, tt := range []struct {
		name   string
		url    string
		limit  int64
		mime   string // the picture read, by content
		remote string
		status int // the error's status (0: none)
		code   string
	}{
		{"a PNG", dataURL("image/png", pngBytes), 1 << 20, "image/png", "", 0, ""},
		{"the declared type is not believed", dataURL("image/png", jpegBytes), 1 << 20, "image/jpeg", "", 0, ""},
		{"no declared type", "data:;base64," + base64.StdEncoding.EncodeToString(pngBytes), 1 << 20, "image/png", "", 0, ""},
		{"base64 without padding, split over lines", "DATA:image/png;base64," + strings.TrimRight(base64.StdEncoding.EncodeToString(pngBytes), "=")[:20] + "\n" +
			strings.TrimRight(base64.StdEncoding.EncodeToString(pngBytes), "=")[20:], 1 << 20, "image/png", "", 0, ""},
		{"an https address is passed on", "https://example.com/cat.png?size=large", 1 << 20, "", "https://example.com/cat.png?size=large", 0, ""},
		{"a PDF is not a picture", dataURL("image/png", pdfBytes), 1 << 20, "", "", 400, "unsupported_image"},
		{"text is not a picture", "data:text/plain,hello%20world", 1 << 20, "", "", 400, "unsupported_image"},
		{"an SVG is not a picture the providers take", "data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%3E%3C%2Fsvg%3E", 1 << 20, "", "", 400, "unsupported_image"},
		{"too large", dataURL("image/png", pngBytes), 16, "", "", 413, "image_too_large"},
		{"far too large is refused before decoding", "data:image/png;base64," + strings.Repeat("A", 4000), 16, "", "", 413, "image_too_large"},
		{"base64 that does not decode", "data:image/png;base64,!!!not base64!!!", 1 << 20, "", "", 400, "invalid_image_url"},
		{"no comma", "data:image/png;base64", 1 << 20, "", "", 400, "invalid_image_url"},
		{"http is not fetched", "http://example.com/cat.png", 1 << 20, "", "", 400, "unsupported_image_url"},
		{"a file is not read", "file:///etc/passwd", 1 << 20, "", "", 400, "unsupported_image_url"},
		{"another scheme", "ftp://example.com/cat.png", 1 << 20, "", "", 400, "unsupported_image_url"},
		{"a path", "/tmp/cat.png", 1 << 20, "", "", 400, "invalid_image_url"},
		{"empty", "", 1 << 20, "", "", 400, "invalid_image_url"},
		{"https without a host", "https:///cat.png", 1 << 20, "", "", 400, "invalid_image_url"},
		{"an address too long", "https://example.com/" + strings.Repeat("a", maxPictureURLBytes), 1 << 20, "", "", 400, "invalid_image_url"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := readPicture(pictureRef{param: param, url: tt.url}, tt.limit)
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("readPicture: %v", err)
				}
				if got.mime != tt.mime || got.remote != tt.remote || (tt.mime != "" && len(got.data) == 0) {
					t.Fatalf("readPicture = %s %q (%d bytes), want %s %q", got.mime, got.remote, len(got.data), tt.mime, tt.remote)
				}
				return
			}
			var e *apiError
			if !errors.As(err, &e) || e.status != tt.status || e.Code != tt.code || e.Param != param {
				t.Fatalf("readPicture: %+v, want a %d %s naming %s", err, tt.status, tt.code, param)
			}
			if !strings.Contains(e.Message, param) || strings.Contains(e.Message, "\n") {
				t.Fatalf("the error is not one line naming the field: %q", e.Message)
			}
		})
	}
	refs := make([]pictureRef, maxPictures+1)
	for i := range refs {
		refs[i] = pictureRef{param: "p", url: dataURL("image/png", pngBytes)}
	}
	var e *apiError
	if _, err := readPictures(refs); !errors.As(err, &e) || e.Code != "too_many_images" {
		t.Fatalf("%d pictures: %v, want too_many_images", len(refs), err)
	}
}

// TestReadPictureParts: a user message's image_url and input_image parts
// are its pictures, in order, with the field that names each; a picture
// in another message, and an image part without its URL, are 400s.
func TestReadPictureParts(t *testing.T) {
	t.Parallel()
	text := func(s string) openai.ChatMessagePart { return openai.ChatMessagePart{Type: "text", Text: s} }
	image := func(url string) openai.ChatMessagePart {
		return openai.ChatMessagePart{Type: "image_url", ImageURL: &openai.ChatMessageImageURL{URL: url}}
	}
	got, err := readChat([]openai.ChatCompletionMessage{
		{Role: "user", MultiContent: []openai.ChatMessagePart{text("an earlier one"), image("https://example.com/a.png")}},
		{Role: "assistant", Content: "a cat"},
		{Role: "user", MultiContent: []openai.ChatMessagePart{image("data:x"), text("and this?"), image("https://example.com/b.png")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.last != "and this?" || len(got.pictures) != 2 || got.pictures[0] != (pictureRef{"messages[2].content[0].image_url.url", "data:x"}) ||
		got.pictures[1].param != "messages[2].content[2].image_url.url" {
		t.Fatalf("last %q, pictures %+v", got.last, got.pictures)
	}
	if len(got.prior) != 2 || len(got.priorPictures[0]) != 1 || got.priorPictures[0][0].url != "https://example.com/a.png" || len(got.priorPictures[1]) != 0 {
		t.Fatalf("prior %+v, their pictures %+v", got.prior, got.priorPictures)
	}
	// A picture alone is a question.
	if got, err := readChat([]openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{image("data:x")}}}); err != nil || len(got.pictures) != 1 {
		t.Fatalf("a picture alone: %+v, %v", got, err)
	}
	for _, tt := range []struct {
		name  string
		msgs  []openai.ChatCompletionMessage
		param string
	}{
		{"a picture in a system message", []openai.ChatCompletionMessage{{Role: "system", MultiContent: []openai.ChatMessagePart{image("data:x")}}, {Role: "user", Content: "q"}},
			"messages[0].content[0]"},
		{"a picture in an assistant message", []openai.ChatCompletionMessage{{Role: "assistant", MultiContent: []openai.ChatMessagePart{image("data:x")}}, {Role: "user", Content: "q"}},
			"messages[0].content[0]"},
		{"an image part without its image_url", []openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{{Type: "image_url"}}}},
			"messages[0].content[0].image_url"},
	} {
		_, err := readChat(tt.msgs)
		wantParam(t, err, tt.param)
	}

	resp, err := readResponses(json.RawMessage(`[{"role":"user","content":[{"type":"input_text","text":"what?"},
		{"type":"input_image","image_url":"https://example.com/y.png"},{"type":"input_image","image_url":{"url":"data:z"}}]}]`), "")
	if err != nil || resp.last != "what?" || len(resp.pictures) != 2 ||
		resp.pictures[0] != (pictureRef{"input[0].content[1].image_url", "https://example.com/y.png"}) || resp.pictures[1].url != "data:z" {
		t.Fatalf("readResponses = %+v, %v", resp, err)
	}
	for _, tt := range []struct{ name, input, param string }{
		{"an uploaded file's id", `[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]`, "input[0].content[0].file_id"},
		{"no address", `[{"role":"user","content":[{"type":"input_image"}]}]`, "input[0].content[0].image_url"},
		{"a picture in a system message", `[{"role":"system","content":[{"type":"input_image","image_url":"https://x/y.png"}]},{"role":"user","content":"q"}]`, "input[0].content[0]"},
	} {
		_, err := readResponses(json.RawMessage(tt.input), "")
		wantParam(t, err, tt.param)
	}
}

// startPictureAPI is startTurnAPI whose model is configured to see (or
// not), returning the API's working directory too.
func startPictureAPI(t *testing.T, model *fakellm.Server, sees bool) (*storeAPI, string) {
	t.Helper()
	cfg := config.Default(t.TempDir())
	cfg.Model.BaseURL, cfg.Model.APIKey, cfg.Model.Name = model.URL(), "model-key", "fake-model"
	cfg.Models = map[string]modelinfo.Info{"fake-model": {Vision: modelinfo.Bool(sees)}}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rt, err := engine.Start(t.Context(), cfg, engine.Options{Private: true, Worker: true, Logger: logger})
	if err != nil {
		t.Fatalf("start the engine: %v", err)
	}
	t.Cleanup(rt.Close)
	workdir := t.TempDir()
	srv, err := New(Options{Runtime: rt, Config: cfg, Key: storeAPIKey, Workdir: workdir, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &storeAPI{t: t, rt: rt, url: hs.URL}, workdir
}

// sentImages are the image URLs of a request's user messages.
func sentImages(r fakellm.Request) []string {
	var urls []string
	for _, m := range r.Body.Messages {
		for _, p := range m.MultiContent {
			if p.Type == openai.ChatMessagePartTypeImageURL && p.ImageURL != nil {
				urls = append(urls, p.ImageURL.URL)
			}
		}
	}
	return urls
}

// TestChatCompletionPictures: a chat completion's data: URL picture is
// stored, saved into the working directory, named in the message and
// shown to the model that sees; a remote one is passed on by address; a
// response's input_image likewise; what is not a picture, or not a data:
// or https:// address, is a 400 and starts no turn.
func TestChatCompletionPictures(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("A tiny picture."), fakellm.TextStep("A cat, by its address."), fakellm.TextStep("Seen again."))
	defer model.Close()
	a, workdir := startPictureAPI(t, model, true)

	body := map[string]any{"model": "talaria", "messages": []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "What is this?"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": dataURL("image/png", pngBytes)}},
	}}}}
	var c completion
	a.want(http.StatusOK, http.MethodPost, "/v1/chat/completions", body, &c)
	if len(c.Choices) != 1 || deref(c.Choices[0].Message.Content) != "A tiny picture." {
		t.Fatalf("completion = %+v", c)
	}
	reqs := model.Requests()
	if got := sentImages(reqs[0]); len(got) != 1 || got[0] != dataURL("image/png", pngBytes) {
		t.Fatalf("the model was sent %q, want the picture", got)
	}
	wantKeptPicture(t, a, workdir, lastSession(t, a), "What is this?")

	// A remote picture is passed on as its address.
	body["messages"] = []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/cat.png"}}}}}
	a.want(http.StatusOK, http.MethodPost, "/v1/chat/completions", body, &c)
	if got := sentImages(model.Requests()[1]); len(got) != 1 || got[0] != "https://example.com/cat.png" {
		t.Fatalf("the model was sent %q, want the address", got)
	}

	// The Responses API's input_image.
	var out map[string]any
	a.want(http.StatusOK, http.MethodPost, "/v1/responses", map[string]any{"input": []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "input_text", "text": "Again?"},
		map[string]any{"type": "input_image", "image_url": dataURL("image/jpeg", jpegBytes)}}}}}, &out)
	if got := sentImages(model.Requests()[2]); len(got) != 1 || got[0] != dataURL("image/jpeg", jpegBytes) {
		t.Fatalf("the model was sent %q, want the JPEG", got)
	}

	// Refused: a 400 with one line naming the field, no turn.
	for _, tt := range []struct {
		name, url, param string
		status           int
	}{
		{"a PDF", dataURL("image/png", pdfBytes), "messages[0].content[1].image_url.url", 400},
		{"an http address", "http://example.com/cat.png", "messages[0].content[1].image_url.url", 400},
		{"a file", "file:///etc/passwd", "messages[0].content[1].image_url.url", 400},
		{"base64 that does not decode", "data:image/png;base64,%%%", "messages[0].content[1].image_url.url", 400},
	} {
		body["messages"] = []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "look"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": tt.url}}}}}
		status, data := a.do(http.MethodPost, "/v1/chat/completions", body)
		var e errorBody
		if status != tt.status || json.Unmarshal(data, &e) != nil || e.Error == nil || e.Error.Param != tt.param || strings.Contains(e.Error.Message, "\n") {
			t.Errorf("%s: %d %s, want a %d naming %s", tt.name, status, data, tt.status, tt.param)
		}
	}
	if n := len(model.Requests()); n != 3 {
		t.Fatalf("refused requests reached the model: %d requests, want 3", n)
	}
}

// wantKeptPicture checks that the first message of session carries the
// PNG picture: named after text in the message, saved into workdir,
// stored by its digest.
func wantKeptPicture(t *testing.T, a *storeAPI, workdir, session, text string) {
	t.Helper()
	msgs, err := a.rt.Store.Messages(context.Background(), session)
	if err != nil || len(msgs) == 0 || len(msgs[0].Images) != 1 {
		t.Fatalf("stored %+v, %v", msgs, err)
	}
	img := msgs[0].Images[0]
	if !strings.HasPrefix(msgs[0].Content, text+"\n\n[image attached: "+img.Path+" (image/png, ") {
		t.Fatalf("the stored message does not name its picture: %q", msgs[0].Content)
	}
	if saved, err := os.ReadFile(filepath.Join(workdir, img.Path)); err != nil || string(saved) != string(pngBytes) {
		t.Fatalf("the picture is not saved at %s: %v", img.Path, err)
	}
	if att, err := a.rt.Store.Attachment(context.Background(), img.ID); err != nil || string(att.Data) != string(pngBytes) || att.MIME != "image/png" {
		t.Fatalf("the picture is not stored: %+v %v", att, err)
	}
}

// lastSession is the session of the API's latest turn.
func lastSession(t *testing.T, a *storeAPI) string {
	t.Helper()
	var page struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	a.want(http.StatusOK, http.MethodGet, "/api/sessions?limit=1", nil, &page)
	if len(page.Data) == 0 {
		t.Fatal("no session")
	}
	return page.Data[0].ID
}

// TestRunPictures: a run's images are kept and shown as a chat
// completion's are; one that is not a picture is a 400 naming it, and
// starts no turn.
func TestRunPictures(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("A tiny picture."))
	defer model.Close()
	a, workdir := startPictureAPI(t, model, true)

	var started runStarted
	a.want(http.StatusAccepted, http.MethodPost, "/v1/runs", map[string]any{"input": "What is this?",
		"images": []string{dataURL("image/png", pngBytes)}}, &started)
	a.waitFor("/v1/runs/"+started.RunID, time.Minute, func(r run) bool { return r.Status == "completed" })
	if got := sentImages(model.Requests()[0]); len(got) != 1 || got[0] != dataURL("image/png", pngBytes) {
		t.Fatalf("the model was sent %q, want the picture", got)
	}
	wantKeptPicture(t, a, workdir, started.SessionID, "What is this?")

	for _, tt := range []struct {
		name   string
		images []string
		param  string
		status int
	}{
		{"a PDF", []string{dataURL("image/png", pngBytes), dataURL("image/png", pdfBytes)}, "images[1]", 400},
		{"a file", []string{"file:///etc/passwd"}, "images[0]", 400},
		{"too many", slices.Repeat([]string{dataURL("image/png", pngBytes)}, maxPictures+1), "", 400},
		{"with a steer", []string{dataURL("image/png", pngBytes)}, "mode", 400},
		{"with a tool name that cannot be", []string{dataURL("image/png", refusedPNG)}, "", 400},
		{"with too many iterations", []string{dataURL("image/png", refusedPNG)}, "", 400},
	} {
		body := map[string]any{"input": "look", "images": tt.images}
		switch tt.name {
		case "with a steer":
			body["mode"] = "steer"
		case "with a tool name that cannot be":
			body["tools"] = []string{"Not a tool!"}
		case "with too many iterations":
			body["max_iterations"] = 1_000_000
		}
		status, data := a.do(http.MethodPost, "/v1/runs", body)
		var e errorBody
		if status != tt.status || json.Unmarshal(data, &e) != nil || e.Error == nil || e.Error.Param != tt.param || strings.Contains(e.Error.Message, "\n") {
			t.Errorf("%s: %d %s, want a %d naming %q", tt.name, status, data, tt.status, tt.param)
		}
	}
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("refused runs reached the model: %d requests, want 1", n)
	}
	// A run refused for what it asks keeps none of its pictures.
	err := filepath.WalkDir(workdir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if data, err := os.ReadFile(path); err == nil && bytes.Equal(data, refusedPNG) {
			t.Errorf("a refused run's picture was kept: %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Pictures alone make a run's input.
	a.want(http.StatusAccepted, http.MethodPost, "/v1/runs", map[string]any{"images": []string{dataURL("image/png", pngBytes)}}, &started)
}
