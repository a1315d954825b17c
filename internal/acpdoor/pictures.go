package acpdoor

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// The pictures of a prompt: each image block's data, told by its content
// (a JPEG, PNG, GIF or WebP picture of at most attach.DefaultLimits.Image),
// is saved into the session's working directory and stored once by
// digest, as the other doors keep the pictures they receive; the prompt's
// text names it where its block was, and the turn shows it to a model that
// sees. A block that is not such a picture refuses the prompt, naming the
// block.

// maxPictures bounds the pictures of one prompt (as the API's requests).
const maxPictures = 16

// promptPicture is one image block of a prompt, decoded: its index among
// the prompt's blocks, the name it is saved under, its type by content.
type promptPicture struct {
	block int
	name  string
	mime  string
	data  []byte
}

// readPictures decodes the image blocks of a prompt, in order; the first
// that is not a picture (no data, data that does not decode, not a JPEG,
// PNG, GIF or WebP, over the limit) refuses the prompt with an
// invalid-params error naming it. Pure.
func readPictures(blocks []acp.ContentBlock, limit int64) ([]promptPicture, error) {
	var out []promptPicture
	for i, b := range blocks {
		if b.Image == nil {
			continue
		}
		if len(out) == maxPictures {
			return nil, refusePicture("the prompt carries more than %d pictures", maxPictures)
		}
		where := fmt.Sprintf("prompt[%d]", i)
		payload := strings.Map(dropSpace, b.Image.Data)
		switch {
		case payload == "":
			return nil, refusePicture("%s is an image without data", where)
		case int64(base64.StdEncoding.DecodedLen(len(payload))) > limit+2:
			return nil, refusePicture("%s is a picture of about %s, more than the %s a picture may be", where,
				attach.HumanSize(int64(base64.StdEncoding.DecodedLen(len(payload)))), attach.HumanSize(limit))
		}
		data, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			data, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(payload, "="))
		}
		if err != nil {
			return nil, refusePicture("%s is an image whose data is not base64", where)
		}
		if int64(len(data)) > limit {
			return nil, refusePicture("%s is a picture of %s, more than the %s a picture may be", where,
				attach.HumanSize(int64(len(data))), attach.HumanSize(limit))
		}
		mime, kind := attach.Sniff(data, false)
		if kind != attach.Image {
			return nil, refusePicture("%s is not a JPEG, PNG, GIF or WebP picture: its content is %s", where, oneLine(mime, 100))
		}
		out = append(out, promptPicture{block: i, name: pictureName(b.Image.Uri, mime), mime: mime, data: data})
	}
	return out, nil
}

// pictureName is the name a picture is saved under: the last element of
// the address the editor gave it, with the extension of the type its
// content has (a picture named run.sh is saved as run.png), else one for
// its type. Pure.
func pictureName(uri *string, mime string) string {
	standard := attach.PictureNames[mime]
	if uri != nil {
		if u, err := url.Parse(*uri); err == nil && u.Path != "" {
			if name := path.Base(u.Path); name != "/" && name != "." {
				if base := strings.TrimSuffix(name, path.Ext(name)); strings.Trim(base, ". ") != "" {
					return attach.SafeName(base+path.Ext(standard), mime)
				}
			}
		}
	}
	return standard
}

// dropSpace drops the white space base64 may carry (strings.Map).
func dropSpace(r rune) rune {
	switch r {
	case ' ', '\t', '\r', '\n':
		return -1
	}
	return r
}

// refusePicture is the invalid-params error of a prompt's picture.
func refusePicture(format string, args ...any) error {
	return acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf(format, args...)})
}

// keepPictures saves each picture into the session's working directory
// and stores its bytes; it returns the pictures as the turn carries them
// and, by block index, the line that names each for the model.
func (a *Agent) keepPictures(ctx context.Context, id string, pics []promptPicture) ([]turnapi.Image, map[int]string, error) {
	if len(pics) == 0 {
		return nil, nil, nil
	}
	dir := a.cwd(id)
	if dir == "" {
		return nil, nil, errors.New("keep the prompt's pictures: the session has no working directory")
	}
	images := make([]turnapi.Image, 0, len(pics))
	notes := make(map[int]string, len(pics))
	for _, p := range pics {
		img, note, err := attach.KeepPicture(ctx, a.rt.Store, dir, p.name, p.mime, p.data)
		if err != nil {
			return nil, nil, err
		}
		images, notes[p.block] = append(images, img), note
	}
	return images, notes, nil
}
