package attach

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gabriel-vasile/mimetype"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// Kind is what a file is to the agent.
type Kind string

// The kinds of file.
const (
	// Image is a picture a model that sees can be shown: JPEG, PNG, GIF or
	// WebP (what the providers take).
	Image Kind = "image"
	// Audio is a voice memo or other sound, to be transcribed.
	Audio Kind = "audio"
	// Document is everything else: saved for the agent's tools.
	Document Kind = "document"
)

// Limits bound the size of a received file, by kind.
type Limits struct {
	Image, Audio, Document int64
}

// DefaultLimits: 20 MiB for a picture (OpenAI's limit for an image
// input), 25 MiB for audio (the transcription endpoint's), 50 MiB for a
// document.
var DefaultLimits = Limits{Image: 20 << 20, Audio: 25 << 20, Document: 50 << 20}

// Max is the largest file of any kind.
func (l Limits) Max() int64 { return max(l.Image, l.Audio, l.Document) }

// Of is the limit of kind k.
func (l Limits) Of(k Kind) int64 {
	switch k {
	case Image:
		return l.Image
	case Audio:
		return l.Audio
	}
	return l.Document
}

// ErrTooLarge: a file is over its kind's limit.
var ErrTooLarge = errors.New("attach: file too large")

// modelImages are the picture types the model providers take.
var modelImages = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// Sniff tells a file's type from its content: its MIME type and its kind.
// A file said to be a voice memo (voice) whose content is a sound in a
// video container (MP4, WebM: some platforms record voice so) is audio.
// Pure.
func Sniff(data []byte, voice bool) (string, Kind) {
	m := mimetype.Detect(data)
	mime := m.String()
	if i := strings.IndexByte(mime, ';'); i >= 0 {
		mime = mime[:i]
	}
	switch {
	case modelImages[mime]:
		return mime, Image
	case strings.HasPrefix(mime, "audio/"):
		return mime, Audio
	case voice && (mime == "video/mp4" || mime == "video/webm" || mime == "application/ogg" || mime == "video/ogg"):
		return mime, Audio
	}
	return mime, Document
}

// Received is one file as a door took it: its type by content, its saved
// path (relative to the working directory), and for a picture its stored
// bytes' id.
type Received struct {
	Kind Kind
	MIME string
	Name string
	Size int64
	// Path is where the file was saved, relative to the working
	// directory ("uploads/1a2b3c4d5e6f/report.pdf").
	Path string
}

// Note is the line a message carries for a received file, naming it for
// the model. Pure.
func (r Received) Note() string {
	return fmt.Sprintf("[%s attached: %s (%s, %s)]", r.Kind, r.Path, r.MIME, HumanSize(r.Size))
}

// Image is r as a picture of a user message, stored under id.
func (r Received) Image(id string) turnapi.Image {
	return turnapi.Image{ID: id, MIME: r.MIME, Name: r.Name, Path: r.Path, Size: r.Size}
}

// HumanSize is n bytes for a person: "512 B", "12.3 KB", "4.0 MB". Pure.
func HumanSize(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// UploadsDir is the directory of the working directory received files are
// saved in.
const UploadsDir = "uploads"

// maxNameBytes bounds a saved file's name.
const maxNameBytes = 100

// SafeName is name as a plain file name: its last path element, without
// control characters, separators or a leading dot, at most 100 bytes (its
// extension kept); "file" plus the type's extension when nothing is left.
// Pure.
func SafeName(name, mime string) string {
	name = strings.ReplaceAll(name, "\\", "/")
	name = path.Base(name)
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '/' || r == utf8.RuneError || unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, name)
	name = strings.TrimLeft(strings.TrimSpace(name), ".")
	if name == "" {
		ext := ""
		if m := mimetype.Lookup(mime); m != nil {
			ext = m.Extension()
		}
		name = "file" + ext
	}
	if len(name) > maxNameBytes {
		ext := path.Ext(name)
		if len(ext) > 16 {
			ext = ""
		}
		stem := name[:maxNameBytes-len(ext)]
		for len(stem) > 0 && !utf8.ValidString(stem) {
			stem = stem[:len(stem)-1]
		}
		name = stem + ext
	}
	return name
}

// Save writes data into dir as uploads/<first 12 hex digits of its
// SHA-256>/<SafeName(name)> and returns that path, relative to dir: the
// same bytes under the same name land in the same place, written anew
// (whatever a command left there is replaced). The write goes through an os.Root of dir:
// a link a command placed under dir cannot lead it anywhere else.
func Save(dir, name, mime string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("attach: save %s: %w", name, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", fmt.Errorf("attach: save %s: %w", name, err)
	}
	defer root.Close()
	sub := path.Join(UploadsDir, models.AttachmentID(data)[:12])
	rel := path.Join(sub, SafeName(name, mime))
	if err := root.MkdirAll(sub, 0o755); err != nil {
		return "", fmt.Errorf("attach: save %s: %w", rel, err)
	}
	if info, err := root.Lstat(rel); err == nil && !info.Mode().IsRegular() {
		if err := root.RemoveAll(rel); err != nil {
			return "", fmt.Errorf("attach: save %s: %w", rel, err)
		}
	}
	// A temporary name of its own: two saves of the same file at once
	// (a request and its retry) must not write into one another's.
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	tmp := rel + "." + hex.EncodeToString(nonce[:]) + ".part"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("attach: save %s: %w", rel, err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = root.Remove(tmp)
		return "", fmt.Errorf("attach: save %s: %w", rel, err)
	}
	if err := root.Rename(tmp, rel); err != nil {
		_ = root.Remove(tmp)
		return "", fmt.Errorf("attach: save %s: %w", rel, err)
	}
	return filepath.ToSlash(rel), nil
}

// Keeper stores a file's bytes once and returns their id
// (models.Store.PutAttachment).
type Keeper interface {
	PutAttachment(ctx context.Context, mime string, data []byte) (string, error)
}

// KeepPicture saves a picture of type mime into dir (Save) and stores its
// bytes with k: it returns the picture as a user message carries it and
// the line that names it for the model.
func KeepPicture(ctx context.Context, k Keeper, dir, name, mime string, data []byte) (turnapi.Image, string, error) {
	rel, err := Save(dir, name, mime, data)
	if err != nil {
		return turnapi.Image{}, "", fmt.Errorf("keep a picture: %w", err)
	}
	id, err := k.PutAttachment(ctx, mime, data)
	if err != nil {
		return turnapi.Image{}, "", fmt.Errorf("keep a picture: %w", err)
	}
	r := Received{Kind: Image, MIME: mime, Name: name, Size: int64(len(data)), Path: rel}
	return r.Image(id), r.Note(), nil
}

// PictureNames are the names a picture received without one is saved
// under, by type.
var PictureNames = map[string]string{"image/jpeg": "picture.jpg", "image/png": "picture.png", "image/gif": "picture.gif", "image/webp": "picture.webp"}
