package acpdoor

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/png"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// TestReadPictures: a prompt's image blocks are decoded and told by their
// content; one that is not a picture the providers take refuses the
// prompt, naming the block and why.
func TestReadPictures(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	pic := b.Bytes()
	enc := base64.StdEncoding.EncodeToString(pic)
	shot := "file:///home/me/shots/Screen%20Shot.png"
	withURI := acp.ImageBlock(enc, "image/jpeg") // the type it claims is not the one it has
	withURI.Image.Uri = &shot
	many := make([]acp.ContentBlock, maxPictures+1)
	for i := range many {
		many[i] = acp.ImageBlock(enc, "image/png")
	}
	script := "file:///w/run.sh"
	disguised := acp.ImageBlock(enc, "image/png")
	disguised.Image.Uri = &script
	climb := "file:///w/..%2F..%2Fetc%2Fcron.d%2Fx.png"
	climbing := acp.ImageBlock(enc, "image/png")
	climbing.Image.Uri = &climb
	dotted := "file:///w/.bashrc"
	hidden := acp.ImageBlock(enc, "image/png")
	hidden.Image.Uri = &dotted
	for _, c := range []struct {
		name    string
		blocks  []acp.ContentBlock
		limit   int64
		names   []string
		refusal string
	}{
		{"none", []acp.ContentBlock{acp.TextBlock("hi")}, 1 << 20, nil, ""},
		{"a picture", []acp.ContentBlock{acp.TextBlock("what is this?"), acp.ImageBlock(enc, "image/png")}, 1 << 20, []string{"picture.png"}, ""},
		{"named by its address", []acp.ContentBlock{withURI}, 1 << 20, []string{"Screen Shot.png"}, ""},
		{"named as a script", []acp.ContentBlock{disguised}, 1 << 20, []string{"run.png"}, ""},
		{"named to climb out", []acp.ContentBlock{climbing}, 1 << 20, []string{"x.png"}, ""},
		{"named by its extension alone", []acp.ContentBlock{hidden}, 1 << 20, []string{"picture.png"}, ""},
		{"wrapped base64", []acp.ContentBlock{acp.ImageBlock(enc[:8]+"\n"+enc[8:], "image/png")}, 1 << 20, []string{"picture.png"}, ""},
		{"no data", []acp.ContentBlock{acp.TextBlock("x"), acp.ImageBlock("", "image/png")}, 1 << 20, nil, "prompt[1] is an image without data"},
		{"not base64", []acp.ContentBlock{acp.ImageBlock("%%%%", "image/png")}, 1 << 20, nil, "prompt[0] is an image whose data is not base64"},
		{"not a picture", []acp.ContentBlock{acp.ImageBlock(base64.StdEncoding.EncodeToString([]byte("#!/bin/sh\nrm -rf /\n")), "image/png")}, 1 << 20, nil,
			"prompt[0] is not a JPEG, PNG, GIF or WebP picture: its content is text/x-shellscript"},
		{"too large", []acp.ContentBlock{acp.ImageBlock(enc, "image/png")}, int64(len(pic) - 1), nil, "more than the"},
		{"too many", many, 1 << 20, nil, "more than 16 pictures"},
	} {
		got, err := readPictures(c.blocks, c.limit)
		if c.refusal != "" {
			var re *acp.RequestError
			if !errors.As(err, &re) || re.Code != acp.NewInvalidParams(nil).Code || !strings.Contains(re.Error(), c.refusal) {
				t.Errorf("%s: %v, want an invalid-params error with %q", c.name, err, c.refusal)
			}
			continue
		}
		if err != nil || len(got) != len(c.names) {
			t.Errorf("%s: %+v, %v; want %d pictures", c.name, got, err, len(c.names))
			continue
		}
		for i, p := range got {
			if p.name != c.names[i] || p.mime != "image/png" || !bytes.Equal(p.data, pic) {
				t.Errorf("%s: picture %d named %q (%s, %d bytes), want %q, image/png, the picture's bytes", c.name, i, p.name, p.mime, len(p.data), c.names[i])
			}
		}
	}
}
