package api

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// The pictures of a request's user messages: a chat completion's
// image_url parts and a response's input_image parts. A data: URL is
// decoded, told by its content (a JPEG, PNG, GIF or WebP picture, at most
// attach.DefaultLimits.Image), stored once by digest and saved into the
// working directory, and the message's text names it; an https:// address
// is passed on to the model by reference, never fetched here. Anything
// else is refused with a 400 naming the field.

// Bounds of a request's pictures.
const (
	// maxPictures bounds the pictures of one request.
	maxPictures = 16
	// maxPictureURLBytes bounds a remote picture's address (it rides with
	// the turn, in its history).
	maxPictureURLBytes = 4096
	// MaxPictureBodyBytes bounds the body of a request that may carry
	// pictures (a chat completion, a response, a run): a picture at its limit,
	// base64-encoded, and the rest of the request.
	MaxPictureBodyBytes = 32 << 20
)

// pictureRef is a picture as a request names it: the field and its URL.
type pictureRef struct {
	param string
	url   string
}

// picture is a picture read from a request: the bytes of a data: URL and
// their type, told by content, or the address of a remote one.
type picture struct {
	data   []byte
	mime   string
	remote string
}

// readPicture reads the picture ref names: a base64 (or percent-encoded)
// data: URL whose content is a picture the model providers take, of at
// most limit bytes, or an https:// address. Anything else is a 400 (a
// picture too large a 413) naming the field. Pure.
func readPicture(ref pictureRef, limit int64) (picture, error) {
	raw := strings.TrimSpace(ref.url)
	scheme, rest, found := strings.Cut(raw, ":")
	if raw != "" && (!found || !isScheme(scheme)) {
		return picture{}, badParam(ref.param, "invalid_image_url", "%s is neither a data: URL nor an https:// address", ref.param)
	}
	switch strings.ToLower(scheme) {
	case "data":
		return readDataURL(ref.param, rest, limit)
	case "https":
		u, err := url.Parse(raw)
		switch {
		case err != nil || u.Host == "":
			return picture{}, badParam(ref.param, "invalid_image_url", "%s is not a valid https:// address", ref.param)
		case len(raw) > maxPictureURLBytes:
			return picture{}, badParam(ref.param, "invalid_image_url", "%s is longer than %d bytes: send the picture as a data: URL", ref.param, maxPictureURLBytes)
		}
		return picture{remote: raw}, nil
	case "":
		return picture{}, badParam(ref.param, "invalid_image_url", "%s is empty: send a data: URL or an https:// address", ref.param)
	}
	return picture{}, badParam(ref.param, "unsupported_image_url",
		"%s is a %s: address; a picture is a data: URL or an https:// address (Talaria fetches no http://, file: or other addresses)",
		ref.param, oneLine(strings.ToLower(scheme)))
}

// isScheme reports whether s is a URL scheme: a letter, then letters,
// digits, '+', '-' or '.'. Pure.
func isScheme(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// readDataURL decodes the part of a data: URL after "data:" and checks
// that it is a picture of at most limit bytes. Pure.
func readDataURL(param, rest string, limit int64) (picture, error) {
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return picture{}, badParam(param, "invalid_image_url", "%s is not a valid data: URL (no comma before its data)", param)
	}
	var (
		data []byte
		err  error
	)
	if strings.HasSuffix(strings.ToLower(meta), ";base64") {
		payload = strings.Map(dropSpace, payload)
		if int64(base64.StdEncoding.DecodedLen(len(payload))) > limit+2 {
			return picture{}, tooLargePicture(param, int64(base64.StdEncoding.DecodedLen(len(payload))), limit)
		}
		data, err = base64.StdEncoding.DecodeString(payload)
		if err != nil {
			data, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(payload, "="))
		}
	} else {
		var s string
		s, err = url.PathUnescape(payload)
		data = []byte(s)
	}
	if err != nil {
		return picture{}, badParam(param, "invalid_image_url", "%s is not a valid data: URL: its data does not decode", param)
	}
	if int64(len(data)) > limit {
		return picture{}, tooLargePicture(param, int64(len(data)), limit)
	}
	mime, kind := attach.Sniff(data, false)
	if kind != attach.Image {
		return picture{}, badParam(param, "unsupported_image",
			"%s is not a JPEG, PNG, GIF or WebP picture: its content is %s", param, oneLine(mime))
	}
	return picture{data: data, mime: mime}, nil
}

// dropSpace drops the white space a data: URL may carry (strings.Map).
func dropSpace(r rune) rune {
	switch r {
	case ' ', '\t', '\r', '\n':
		return -1
	}
	return r
}

// tooLargePicture is the 413 of a picture over its limit. Pure.
func tooLargePicture(param string, size, limit int64) error {
	e := errorf(http.StatusRequestEntityTooLarge, typeInvalidRequest, "image_too_large",
		"%s is a picture of %s, more than the %s a picture may be", param, attach.HumanSize(size), attach.HumanSize(limit))
	e.Param = param
	return e
}

// readPictures reads every picture refs name, in order, before any is
// kept: one that is not a picture refuses the request. Pure.
func readPictures(refs []pictureRef) ([]picture, error) {
	if len(refs) > maxPictures {
		return nil, badRequest("too_many_images", "the request carries %d pictures, more than the %d one request may", len(refs), maxPictures)
	}
	out := make([]picture, 0, len(refs))
	for _, ref := range refs {
		p, err := readPicture(ref, attach.DefaultLimits.Image)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// keepPictures stores each picture's bytes (once, by digest) and saves it
// into the working directory; it returns the pictures as the turn carries
// them and a line naming each for the model.
func (s *Server) keepPictures(ctx context.Context, pics []picture) ([]turnapi.Image, []string, error) {
	var (
		images []turnapi.Image
		notes  []string
	)
	for _, p := range pics {
		if p.remote != "" {
			images = append(images, turnapi.Image{URL: p.remote})
			notes = append(notes, remoteNote(p.remote))
			continue
		}
		dir, err := s.pictureDir()
		if err != nil {
			return nil, nil, err
		}
		img, note, err := attach.KeepPicture(ctx, s.rt.Store, dir, attach.PictureNames[p.mime], p.mime, p.data)
		if err != nil {
			return nil, nil, err
		}
		images, notes = append(images, img), append(notes, note)
	}
	return images, notes, nil
}

// remoteNote is the line naming a remote picture for the model. Pure.
func remoteNote(addr string) string {
	return fmt.Sprintf("[%s attached: %s (a remote picture, passed on by its address)]", attach.Image, addr)
}

// pictureDir is where the API's turns work, and their pictures are saved:
// the server's working directory, else the process's.
func (s *Server) pictureDir() (string, error) {
	if s.workdir != "" {
		return s.workdir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("keep a picture: the working directory: %w", err)
	}
	return wd, nil
}

// withNotes is a message's text followed by the lines naming its
// pictures, as the gateway writes a message with files. Pure.
func withNotes(text string, notes []string) string {
	if len(notes) == 0 {
		return text
	}
	lines := strings.Join(notes, "\n")
	if strings.TrimSpace(text) == "" {
		return lines
	}
	return text + "\n\n" + lines
}

// takePictures reads, then keeps, the pictures of the turn's message
// and, when the request begins a new session (seed), of its earlier user
// messages: each message's text names its pictures, which ride with it.
func (s *Server) takePictures(ctx context.Context, t *turnText, seed bool) ([]turnapi.Image, error) {
	refs := append([]pictureRef(nil), t.pictures...)
	if seed {
		for i := range t.prior {
			refs = append(refs, t.priorPictures[i]...)
		}
	}
	if len(refs) == 0 {
		return nil, nil
	}
	pics, err := readPictures(refs)
	if err != nil {
		return nil, err
	}
	images, notes, err := s.keepPictures(ctx, pics)
	if err != nil {
		return nil, err
	}
	n := len(t.pictures)
	t.last = withNotes(t.last, notes[:n])
	if seed {
		for i := range t.prior {
			k := len(t.priorPictures[i])
			if k == 0 {
				continue
			}
			t.prior[i].Images = images[n : n+k]
			t.prior[i].Content = withNotes(t.prior[i].Content, notes[n:n+k])
			n += k
		}
	}
	return images[:len(t.pictures)], nil
}
