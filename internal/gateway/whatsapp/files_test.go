package whatsapp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/fakewhatsapp"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// hooked is a business number on the fake whose webhook is the adapter's
// Hook: the updates it read, by message id.
type hooked struct {
	w       *WhatsApp
	wa      *fakewhatsapp.Server
	mu      sync.Mutex
	updates map[string]gateway.Update
}

func startHooked(t *testing.T) *hooked {
	t.Helper()
	wa := fakewhatsapp.Start()
	t.Cleanup(wa.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := New(ctx, Options{APIURL: wa.URL(), AccessToken: wa.AccessToken, AppSecret: wa.AppSecret, VerifyToken: wa.VerifyToken, PhoneNumberID: wa.PhoneNumberID})
	if err != nil {
		t.Fatal(err)
	}
	h := &hooked{w: w, wa: wa, updates: map[string]gateway.Update{}}
	hook := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got, err := w.Hook(r, body)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusForbidden)
			return
		}
		h.mu.Lock()
		for _, u := range got.Updates {
			h.updates[u.ID] = u
		}
		h.mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	wa.SetWebhook(hook.URL)
	return h
}

// send is a file from a person, as the adapter read it.
func (h *hooked) send(t *testing.T, from string, f fakewhatsapp.File) (gateway.Update, string) {
	t.Helper()
	id, mediaID, status, err := h.wa.SendMedia(from, f)
	if err != nil || status != http.StatusOK {
		t.Fatalf("the webhook: %d %v", status, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	u, ok := h.updates[id]
	if !ok || len(u.Files) != 1 {
		t.Fatalf("the message with a file became %+v", u)
	}
	return u, mediaID
}

// TestFilesIn: a document, a voice note and a picture with a caption
// become files fetched through the media endpoint with the access token;
// a file over max is refused before a byte of it is downloaded; a media
// URL on another host is never fetched.
func TestFilesIn(t *testing.T) {
	t.Parallel()
	h := startHooked(t)
	ctx := context.Background()
	const from = "15550000042"

	doc := []byte("quarterly numbers\n")
	u, id := h.send(t, from, fakewhatsapp.File{Type: "document", Name: "q3.txt", MIME: "text/plain", Caption: "the numbers", Data: doc})
	if f := u.Files[0]; u.Text != "the numbers" || f.Name != "q3.txt" || f.MIME != "text/plain" || f.Voice {
		t.Errorf("the document: text %q, file %+v", u.Text, f)
	}
	if got, err := u.Files[0].Fetch(ctx, 1<<20); err != nil || !bytes.Equal(got, doc) {
		t.Errorf("fetch the document: %q %v", got, err)
	}
	if n := h.wa.Downloads(id); n != 1 {
		t.Errorf("the document was downloaded %d times", n)
	}

	voice := append([]byte("OggS"), make([]byte, 200)...)
	u, _ = h.send(t, from, fakewhatsapp.File{Type: "audio", MIME: "audio/ogg; codecs=opus", Voice: true, Data: voice})
	if f := u.Files[0]; !f.Voice || u.Text != "" {
		t.Errorf("the voice note: %+v", u)
	}
	if got, err := u.Files[0].Fetch(ctx, 1<<20); err != nil || !bytes.Equal(got, voice) {
		t.Errorf("fetch the voice note: %d bytes, %v", len(got), err)
	}

	big := bytes.Repeat([]byte{0xff}, 4096)
	u, id = h.send(t, from, fakewhatsapp.File{Type: "image", MIME: "image/jpeg", Caption: "look", Data: big})
	if u.Text != "look" || u.Files[0].Voice {
		t.Errorf("the picture: %+v", u)
	}
	if _, err := u.Files[0].Fetch(ctx, 1000); !errors.Is(err, attach.ErrTooLarge) {
		t.Errorf("a picture over max: %v, want ErrTooLarge", err)
	}
	if n := h.wa.Downloads(id); n != 0 {
		t.Errorf("a picture over max was downloaded %d times", n)
	}

	var hits atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer elsewhere.Close()
	h.wa.SetMediaBase(elsewhere.URL)
	u, _ = h.send(t, from, fakewhatsapp.File{Type: "document", Name: "x.pdf", MIME: "application/pdf", Data: []byte("%PDF-1.4")})
	if _, err := u.Files[0].Fetch(ctx, 1<<20); err == nil || !strings.Contains(err.Error(), "not fetched") {
		t.Errorf("a media URL on another host: %v", err)
	}
	if hits.Load() != 0 {
		t.Errorf("the other host was asked %d times", hits.Load())
	}
}

// TestSendFile: a document is uploaded and sent naming the upload; text
// other than the Cloud API's document types goes as text/plain with its
// name; a type no document may have, or a person outside the 24-hour
// window, is undeliverable.
func TestSendFile(t *testing.T) {
	t.Parallel()
	h := startHooked(t)
	ctx := context.Background()
	const to = "15550000042"
	h.send(t, to, fakewhatsapp.File{Type: "document", Name: "a.txt", MIME: "text/plain", Data: []byte("hi")})

	data := []byte("# Report\n\nAll well.\n")
	id, err := h.w.SendFile(ctx, gateway.Outgoing{ChatID: to, Text: "the report"}, gateway.OutFile{Name: "report.md", MIME: "text/markdown", Data: data})
	if err != nil {
		t.Fatal(err)
	}
	ups := h.wa.Uploads()
	if len(ups) != 1 || ups[0].Name != "report.md" || ups[0].MIME != "text/plain" || !bytes.Equal(ups[0].Data, data) {
		t.Fatalf("uploads: %+v", ups)
	}
	var sent *fakewhatsapp.Message
	for _, m := range h.wa.Sent() {
		if m.ID == id {
			sent = &m
		}
	}
	if sent == nil || sent.Type != "document" || sent.To != to || sent.Body != "the report" || sent.Document == nil ||
		sent.Document.Name != "report.md" || !bytes.Equal(sent.Document.Data, data) {
		t.Fatalf("the document message: %+v", sent)
	}

	if _, err := h.w.SendFile(ctx, gateway.Outgoing{ChatID: to}, gateway.OutFile{Name: "a.zip", MIME: "application/zip", Data: []byte("PK\x03\x04")}); !errors.Is(err, gateway.ErrUndeliverable) {
		t.Errorf("a zip: %v, want undeliverable", err)
	}
	h.wa.Age(to, 25*time.Hour)
	if _, err := h.w.SendFile(ctx, gateway.Outgoing{ChatID: to}, gateway.OutFile{Name: "b.pdf", MIME: "application/pdf", Data: []byte("%PDF-1.4")}); !errors.Is(err, gateway.ErrUndeliverable) || !strings.Contains(err.Error(), "24 hours") {
		t.Errorf("outside the window: %v", err)
	}
	if n := len(h.wa.Uploads()); n != 2 {
		t.Errorf("%d uploads, want 2 (the zip refused before)", n)
	}
}

func TestDocumentType(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mime, data, want string
		ok               bool
	}{
		{"application/pdf", "%PDF", "application/pdf", true},
		{"text/plain; charset=utf-8", "hi", "text/plain", true},
		{"text/csv", "a,b", "text/plain", true},
		{"application/json", "{}", "text/plain", true},
		{"text/markdown", "a\x00b", "", false},
		{"application/zip", "PK", "", false},
		{"image/png", "\x89PNG", "", false},
	} {
		got, ok := documentType(c.mime, []byte(c.data))
		if got != c.want || ok != c.ok {
			t.Errorf("documentType(%q) = %q %v, want %q %v", c.mime, got, ok, c.want, c.ok)
		}
	}
}

func TestMediaHost(t *testing.T) {
	t.Parallel()
	w := &WhatsApp{apiURL: "https://graph.facebook.com/v21.0"}
	for raw, want := range map[string]bool{
		"https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1": true,
		"https://graph.facebook.com/v21.0/123":                             true,
		"http://lookaside.fbsbx.com/x":                                     false,
		"https://lookaside.fbsbx.com:8443/x":                               false,
		"https://evil.example/lookaside.fbsbx.com":                         false,
		"https://lookaside.fbsbx.com.evil.example/x":                       false,
		"https://user@lookaside.fbsbx.com/x":                               false,
		"http://graph.facebook.com/v21.0/123":                              false,
	} {
		u, _ := url.Parse(raw)
		if got := w.mediaHost(u); got != want {
			t.Errorf("mediaHost(%s) = %v", raw, got)
		}
	}
}
