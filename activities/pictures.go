package activities

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/modelinfo"
	"github.com/talaria-agent/talaria/internal/transcript"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// This file shows the pictures of the conversation's user messages to a
// model call. A model that sees gets each of the most recent
// turnapi.MaxShownImages pictures as an image part of its message (the
// stored bytes as a data URL, or the remote address as sent); a model that
// does not see, and an older picture, get one line of the message naming
// them and where they were saved, so that the model can still reach them
// through its tools. Loading the bytes is kept apart from the decision,
// which is pure (PicturedMessage).

// Picture is one picture of a stored user message as a model call sends
// it.
type Picture struct {
	turnapi.Image
	// URL is what its image part carries: the stored bytes as a data URL,
	// or the remote address as sent; "" when its bytes are gone from the
	// store (or were not loaded: an old picture, a model that does not see).
	URL string
	// Old says it is not among the conversation's turnapi.MaxShownImages
	// most recent pictures: it is named, not sent.
	Old bool
	// NoAddress says it is a remote picture the model's endpoint cannot
	// take by its address (Ollama fetches none): it is named, not sent.
	NoAddress bool
}

// pictureSight is what a model call can be shown: whether its model sees,
// and whether its endpoint takes a picture by address.
type pictureSight struct {
	sees, byAddress bool
}

// PicturedMessage is stored user message m with its pictures, as a model
// that sees (sees) or does not gets it: the text, then one image part per
// picture it is shown; the pictures it is not shown are named in one line
// of the text per reason (the model does not see; the picture is older
// than the most recent ones; the endpoint takes no address; its bytes are
// gone). Pure.
func PicturedMessage(m models.Message, pics []Picture, sees bool) openai.ChatCompletionMessage {
	msg := transcript.MessageToOpenAI(m)
	if len(pics) == 0 {
		return msg
	}
	var shown, old, unfetched, gone []Picture
	for _, p := range pics {
		switch {
		case !sees:
			old = append(old, p) // named in the line below
		case p.Old:
			old = append(old, p)
		case p.NoAddress:
			unfetched = append(unfetched, p)
		case p.URL == "":
			gone = append(gone, p)
		default:
			shown = append(shown, p)
		}
	}
	var notes []string
	switch {
	case !sees:
		notes = append(notes, fmt.Sprintf("(This model cannot see images: %s %s not shown to it.)", sentWith(old), wasWere(len(old))))
	case len(old) > 0:
		notes = append(notes, fmt.Sprintf("(%s %s no longer shown: a model call shows only the %d most recent pictures of the conversation.)",
			capitalise(sentWith(old)), isAre(len(old)), turnapi.MaxShownImages))
	}
	if len(unfetched) > 0 {
		notes = append(notes, fmt.Sprintf("(%s could not be shown: this model's endpoint takes pictures by their bytes, not by address.)",
			capitalise(sentWith(unfetched))))
	}
	if len(gone) > 0 {
		their := "its stored bytes are"
		if len(gone) > 1 {
			their = "their stored bytes are"
		}
		notes = append(notes, fmt.Sprintf("(%s could not be shown: %s gone.)", capitalise(sentWith(gone)), their))
	}
	text := m.Content
	for _, n := range notes {
		text = joinLines(text, n)
	}
	if len(shown) == 0 {
		msg.Content = text
		return msg
	}
	msg.Content = ""
	if strings.TrimSpace(text) != "" {
		msg.MultiContent = append(msg.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: text})
	}
	for _, p := range shown {
		msg.MultiContent = append(msg.MultiContent, openai.ChatMessagePart{
			Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: p.URL}})
	}
	return msg
}

// sentWith names pictures: "the 1 picture sent with this message, saved at
// uploads/ab/photo.jpg," (or at its address, for a remote one). Pure.
func sentWith(pics []Picture) string {
	noun := "pictures"
	if len(pics) == 1 {
		noun = "picture"
	}
	saved := true
	labels := make([]string, 0, len(pics))
	for _, p := range pics {
		saved = saved && p.Path != ""
		labels = append(labels, pictureLabel(p.Image))
	}
	where := joinList(labels)
	if saved {
		where = "saved at " + where
	}
	return fmt.Sprintf("the %d %s sent with this message, %s,", len(pics), noun, where)
}

// maxLabelBytes bounds a remote picture's address in a line.
const maxLabelBytes = 200

// pictureLabel is where a picture is: its saved path, else its address
// (clipped), else its name. Pure.
func pictureLabel(img turnapi.Image) string {
	return cmp.Or(img.Path, clip(img.URL, maxLabelBytes), img.Name, "(no name)")
}

// joinList joins items as a sentence does: "a", "a and b", "a, b and c".
// Pure.
func joinList(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// capitalise is s with an upper-case first letter (s begins in ASCII).
// Pure.
func capitalise(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// joinLines is text with line after it, on a line of its own. Pure.
func joinLines(text, line string) string {
	if strings.TrimSpace(text) == "" {
		return line
	}
	return text + "\n\n" + line
}

// hasPictures reports whether a message of history carries pictures.
// Pure.
func hasPictures(history []models.Message) bool {
	return slices.ContainsFunc(history, func(m models.Message) bool { return len(m.Images) > 0 })
}

// oldPictures says, for each message of history with pictures beyond the
// conversation's limit most recent ones, how many of its first pictures are
// older than those. Pure.
func oldPictures(history []models.Message, limit int) map[int]int {
	old := map[int]int{}
	left := limit
	for i := len(history) - 1; i >= 0; i-- {
		n := len(history[i].Images)
		if n == 0 {
			continue
		}
		recent := min(n, left)
		left -= recent
		if n > recent {
			old[i] = n - recent
		}
	}
	return old
}

// pictures are the pictures of history's messages as a call that can be
// shown them (sight) sends them, by message index: for a model that sees,
// the most recent ones are loaded from the store (a remote one is its
// address, when the endpoint takes addresses). Bytes gone from the store
// leave a picture without URL; any other failure to load is an error.
func (a *Activities) pictures(ctx context.Context, history []models.Message, sight pictureSight) (map[int][]Picture, error) {
	old := oldPictures(history, turnapi.MaxShownImages)
	out := map[int][]Picture{}
	for i, m := range history {
		for j, img := range m.Images {
			p := Picture{Image: img, Old: j < old[i], NoAddress: img.ID == "" && !sight.byAddress}
			if sight.sees && !p.Old && !p.NoAddress {
				url, err := a.pictureURL(ctx, img)
				if err != nil {
					return nil, fmt.Errorf("call model: picture %d of message %d: %w", j+1, m.ID, err)
				}
				p.URL = url
			}
			out[i] = append(out[i], p)
		}
	}
	return out, nil
}

// pictureURL is what an image part carries for img: its stored bytes as a
// data URL, or its remote address; "" when its bytes are gone.
func (a *Activities) pictureURL(ctx context.Context, img turnapi.Image) (string, error) {
	if img.ID == "" {
		return img.URL, nil
	}
	att, err := a.Store.Attachment(ctx, img.ID)
	if errors.Is(err, models.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return DataURL(cmp.Or(att.MIME, img.MIME), att.Data), nil
}

// DataURL is data as a data: URL of type mime, base64-encoded. Pure.
func DataURL(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// sees reports whether the model ep serves takes pictures: as this worker
// knows it (configuration, discovery at ep) when it can tell, else the
// bundled table's; unknown is no.
func (a *Activities) sees(ctx context.Context, ep llm.Endpoint) bool {
	if a.Vision != nil {
		return a.Vision(ctx, ep)
	}
	info, _ := modelinfo.Bundled(ep.Model)
	return info.Sees()
}
