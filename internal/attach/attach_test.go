package attach

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/models"
)

// pngBytes is a real 2×2 PNG.
func pngBytes(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSniff: the type comes from the content, whatever the name says.
func TestSniff(t *testing.T) {
	t.Parallel()
	ogg := append([]byte("OggS\x00\x02"), make([]byte, 20)...)
	ogg = append(ogg, []byte("\x01\x13OpusHead\x01\x01")...)
	mp4 := []byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom")
	tests := []struct {
		name  string
		data  []byte
		voice bool
		mime  string
		kind  Kind
	}{
		{"png", pngBytes(t), false, "image/png", Image},
		{"jpeg", []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), false, "image/jpeg", Image},
		{"svg is no model image", []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`), false, "image/svg+xml", Document},
		{"pdf", []byte("%PDF-1.7\n%âãÏÓ\n"), false, "application/pdf", Document},
		{"ogg opus", ogg, true, "audio/ogg", Audio},
		{"voice in mp4", mp4, true, "video/mp4", Audio},
		{"a video that is not voice", mp4, false, "video/mp4", Document},
		{"text", []byte("hello\n"), false, "text/plain", Document},
		{"empty", nil, false, "text/plain", Document},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mime, kind := Sniff(tt.data, tt.voice)
			if kind != tt.kind || (tt.mime != "" && mime != tt.mime) {
				t.Fatalf("Sniff = %s %s, want %s %s", mime, kind, tt.mime, tt.kind)
			}
		})
	}
}

func TestSafeName(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, mime, want string }{
		{"report.pdf", "application/pdf", "report.pdf"},
		{"../../etc/passwd", "", "passwd"},
		{`C:\Users\me\photo.jpg`, "", "photo.jpg"},
		{".bashrc", "", "bashrc"},
		{"..", "image/png", "file.png"},
		{"", "application/pdf", "file.pdf"},
		{"a\x00b\nc\u202e.txt", "", "abc.txt"},
		{strings.Repeat("x", 300) + ".txt", "", strings.Repeat("x", 96) + ".txt"},
	}
	for _, tt := range tests {
		if got := SafeName(tt.in, tt.mime); got != tt.want {
			t.Errorf("SafeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSave: a file lands under uploads/<digest>/<name>, the same bytes in
// the same place; a link a command left in the way leads nowhere outside.
func TestSave(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	data := []byte("the quarterly numbers\n")
	rel, err := Save(dir, "../numbers.txt", "text/plain", data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rel, "uploads/") || filepath.Base(rel) != "numbers.txt" {
		t.Fatalf("saved at %q", rel)
	}
	if got, err := os.ReadFile(filepath.Join(dir, rel)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %q, %v", got, err)
	}
	again, err := Save(dir, "numbers.txt", "text/plain", data)
	if err != nil || again != rel {
		t.Fatalf("saved again at %q (%v), want %q", again, err, rel)
	}

	// A command replaces the file by a link out of the directory, and the
	// digest's directory of another file by a link too.
	target := filepath.Join(outside, "secret")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, rel)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, rel)); err != nil {
		t.Fatal(err)
	}
	if _, err := Save(dir, "numbers.txt", "text/plain", data); err != nil {
		t.Fatal(err)
	}
	other := []byte("other")
	sub := filepath.Join(dir, "uploads", models.AttachmentID(other)[:12])
	if err := os.Symlink(outside, sub); err != nil {
		t.Fatal(err)
	}
	_, _ = Save(dir, "secret", "text/plain", other) // refused: the link leads out
	if got, _ := os.ReadFile(target); string(got) != "keep" {
		t.Fatalf("a file outside the directory was written: %q", got)
	}
	if got, err := os.ReadFile(filepath.Join(dir, rel)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the link was not replaced by the file: %q, %v", got, err)
	}
}

// TestTranscribe: a memo goes to the endpoint as OpenAI's client sends
// it, and its transcript comes back; none configured says so.
func TestTranscribe(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithAPIKey("k"), fakellm.WithTranscriber(func(name string, data []byte) string {
		return "  remind me to water the plants  "
	}))
	defer model.Close()
	tr := NewTranscriber(model.URL(), "k", "", nil)
	got, err := tr.Transcribe(context.Background(), "voice.ogg", []byte("OggS..."))
	if err != nil || got != "remind me to water the plants" {
		t.Fatalf("Transcribe = %q, %v", got, err)
	}
	heard := model.Transcriptions()
	if len(heard) != 1 || heard[0].Model != DefaultTranscriptionModel || heard[0].Name != "voice.ogg" || string(heard[0].Data) != "OggS..." {
		t.Fatalf("the endpoint heard %+v", heard)
	}
	if _, err := NewTranscriber(model.URL(), "wrong", "", nil).Transcribe(context.Background(), "v.ogg", []byte("x")); err == nil {
		t.Fatal("a refused key transcribed")
	}
	var none *Transcriber
	if _, err := none.Transcribe(context.Background(), "v.ogg", nil); !errors.Is(err, ErrNoTranscriber) {
		t.Fatalf("no endpoint: %v", err)
	}
}
