package discord

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// cdnHosts are the hosts Discord serves attachments from: an
// attachment's url, and its proxy_url.
var cdnHosts = map[string]bool{"cdn.discordapp.com": true, "media.discordapp.net": true}

// downloadTimeout bounds one attachment's download.
const downloadTimeout = 5 * time.Minute

// maxRedirects bounds the redirects a download follows (each to a host
// a download may go to).
const maxRedirects = 3

// errForeignURL: an attachment's URL is neither on Discord's CDN nor on
// the configured API's host; it is not followed.
var errForeignURL = errors.New("the attachment's URL is not on Discord's CDN")

// filesOf are the files attached to a message. A voice message (the
// IS_VOICE_MESSAGE flag) carries its recording as its one audio
// attachment. The attachment's url is signed by Discord (its ex, is and
// hm parameters) and needs no token: the bot's token is never sent to
// the CDN.
func (d *Discord) filesOf(m *discordgo.Message) []gateway.File {
	voice := m.Flags&discordgo.MessageFlagsIsVoiceMessage != 0
	var out []gateway.File
	for _, a := range m.Attachments {
		if a == nil {
			continue
		}
		a := *a
		out = append(out, gateway.File{Name: a.Filename, MIME: a.ContentType, Size: max(int64(a.Size), 0),
			Voice: voice && (a.ContentType == "" || strings.HasPrefix(a.ContentType, "audio/")),
			Fetch: func(ctx context.Context, limit int64) ([]byte, error) { return d.fetch(ctx, a, limit) }})
	}
	return out
}

// fetch downloads an attachment, at most limit bytes: one Discord says is
// larger is refused without a request, and one that turns out larger
// when it comes is cut off at limit.
func (d *Discord) fetch(ctx context.Context, a discordgo.MessageAttachment, limit int64) ([]byte, error) {
	name := attach.SafeName(a.Filename, a.ContentType)
	if size := int64(a.Size); size > limit {
		return nil, fmt.Errorf("%w: %s, at most %s", attach.ErrTooLarge, attach.HumanSize(size), attach.HumanSize(limit))
	}
	if err := d.fileURLAllowed(a.URL); err != nil {
		return nil, fmt.Errorf("discord: download %s: %w", name, err)
	}
	data, err := gateway.Download(ctx, d.files, a.URL, limit, nil)
	if errors.Is(err, attach.ErrTooLarge) {
		return nil, err // says what it is as it is
	}
	if err != nil {
		return nil, fmt.Errorf("discord: download %s: %w", name, withoutURL(err))
	}
	return data, nil
}

// fileURLAllowed is nil for a URL a download may go to: https on
// Discord's CDN, or the configured API's own scheme and host (a proxy,
// or a test's fake).
func (d *Discord) fileURLAllowed(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Host == "" {
		return errForeignURL
	}
	if u.Scheme == d.api.Scheme && strings.EqualFold(u.Host, d.api.Host) {
		return nil
	}
	if u.Scheme == "https" && cdnHosts[strings.ToLower(u.Hostname())] && (u.Port() == "" || u.Port() == "443") {
		return nil
	}
	return errForeignURL
}

// checkRedirect lets a download follow a redirect only to where it may
// go itself.
func (d *Discord) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return errors.New("too many redirects")
	}
	return d.fileURLAllowed(req.URL.String())
}

// withoutURL is a download's error without the URL the HTTP client names
// in it: a signed URL lets anyone holding it read the file, so it stays
// out of errors and logs.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}

// upload is a file the bot sends.
type upload struct {
	name, mime string
	data       []byte
}

// file is the upload as discordgo sends it: files[0] of a multipart
// Create Message, read from the start.
func (up *upload) file() *discordgo.File {
	return &discordgo.File{Name: up.name, ContentType: up.mime, Reader: bytes.NewReader(up.data)}
}

// SendFile sends a document in m's chat (its thread, as SendPart does):
// a Create Message with the file as files[0] and the last part of m's
// text as its content (the parts before it go first, on their own). A
// file larger than Discord takes from the bot there (HTTP 413) is
// ErrUndeliverable.
func (d *Discord) SendFile(ctx context.Context, m gateway.Outgoing, f gateway.OutFile) (string, error) {
	mime := cmp.Or(f.MIME, "application/octet-stream")
	up := &upload{name: attach.SafeName(f.Name, mime), mime: mime, data: f.Data}
	caption := ""
	if strings.TrimSpace(m.Text) != "" {
		parts := d.Parts(m.Text)
		for _, p := range parts[:len(parts)-1] {
			if _, err := d.SendPart(ctx, gateway.Outgoing{ChatID: m.ChatID, ReplyTo: m.ReplyTo}, p); err != nil {
				return "", err
			}
		}
		caption = parts[len(parts)-1]
	}
	id, err := d.send(ctx, m, caption, up)
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil && rest.Response.StatusCode == http.StatusRequestEntityTooLarge {
		return "", fmt.Errorf("%w: discord: %s (%s) is larger than Discord takes from the bot in this chat", gateway.ErrUndeliverable,
			up.name, attach.HumanSize(int64(len(f.Data))))
	}
	if err != nil {
		return "", d.wrap("create message with "+up.name, err)
	}
	return id, nil
}
