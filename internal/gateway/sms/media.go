package sms

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	twclient "github.com/twilio/twilio-go/client"
	twapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/internal/gateway/format"
)

// Files the agent sends. An MMS carries a file by URL: Twilio fetches
// it from the MediaUrl of Create Message. The gateway serves each file it
// sends itself, from its own webhook route, at
// /webhooks/sms/media/<id>/<expiry>/<signature>/<name>: the signature an
// HMAC over id, expiry and name keyed with a key derived from the auth
// token. A stored file's id is its stored bytes' (any process of the
// installation serves it, after a restart too: read from the store); a
// file that is not stored gets a random id and is held in this process's
// memory until it expires. Nothing else is served there.

const (
	// mediaLifetime is how long a file sent stays fetchable.
	mediaLifetime = time.Hour
	// maxHeld bounds the bytes of the files held for Twilio to fetch.
	maxHeld = 64 << 20
	// mediaRoute is the path under the webhook's URL the files are at.
	mediaRoute = "/media/"
)

// mmsTypes are the types Twilio takes for an MMS's media.
var mmsTypes = map[string]bool{
	"image/jpeg": true, "image/gif": true, "image/png": true, "image/bmp": true, "image/tiff": true,
	"image/heic": true, "image/heif": true,
	"audio/basic": true, "audio/L24": true, "audio/mp4": true, "audio/mpeg": true, "audio/ogg": true, "audio/vnd.wave": true,
	"audio/3gpp": true, "audio/3gpp2": true, "audio/ac3": true, "audio/webm": true, "audio/amr-nb": true, "audio/amr": true, "audio/aac": true,
	"video/mpeg": true, "video/mp4": true, "video/quicktime": true, "video/webm": true, "video/3gpp": true, "video/3gpp2": true,
	"text/vcard": true, "text/x-vcard": true, "text/csv": true, "text/rtf": true, "text/richtext": true, "text/calendar": true, "text/directory": true,
	"application/pdf": true, "application/vcard": true,
	"application/msword": true, "application/vnd.openxmlformats-officedocument.wordprocessingml.document": true,
	"application/vnd.ms-excel": true, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": true,
	"application/vnd.ms-powerpoint": true, "application/vnd.openxmlformats-officedocument.presentationml.presentation": true,
}

// heldFile is a file sent, held for Twilio to fetch.
type heldFile struct {
	name, mime string
	data       []byte
	until      time.Time
}

// held are the files sent and not yet expired, and the webhook's URL as
// Twilio last called it (the base of their URLs when webhook_url is not
// set).
type held struct {
	mu    sync.Mutex
	files map[string]heldFile
	bytes int64
	base  string
	// reader reads stored files (FileLinker).
	reader gateway.AttachmentReader
}

// put holds f under id, dropping expired files, and the oldest ones while
// more than maxHeld bytes would be held.
func (h *held) put(id string, f heldFile, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.files == nil {
		h.files = map[string]heldFile{}
	}
	for k, old := range h.files {
		if now.After(old.until) {
			h.drop(k)
		}
	}
	for h.bytes+int64(len(f.data)) > maxHeld && len(h.files) > 0 {
		oldest := ""
		for k, old := range h.files {
			if oldest == "" || old.until.Before(h.files[oldest].until) {
				oldest = k
			}
		}
		h.drop(oldest)
	}
	h.files[id] = f
	h.bytes += int64(len(f.data))
}

func (h *held) drop(id string) {
	h.bytes -= int64(len(h.files[id].data))
	delete(h.files, id)
}

func (h *held) get(id string) (heldFile, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, ok := h.files[id]
	return f, ok
}

// ReadAttachmentsWith makes the links of stored files read them from the
// store: any process of the installation serves them.
func (s *SMS) ReadAttachmentsWith(read gateway.AttachmentReader) {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	s.held.reader = read
}

// read is the reader of stored files, nil when none was given.
func (s *SMS) read() gateway.AttachmentReader {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	return s.held.reader
}

func (h *held) setBase(base string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.base = base
}

func (h *held) getBase() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.base
}

func (s *SMS) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// mediaKey is the key the files' URLs are signed with, derived from the
// auth token.
func (s *SMS) mediaKey() []byte {
	mac := hmac.New(sha256.New, []byte(s.o.AuthToken))
	mac.Write([]byte("talaria sms media links"))
	return mac.Sum(nil)
}

// linkSignature signs a file's id, expiry and name. Pure but for the key.
func (s *SMS) linkSignature(id, expiry, name string) string {
	mac := hmac.New(sha256.New, s.mediaKey())
	mac.Write([]byte(id + "/" + expiry + "/" + name))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// publicBase is the webhook's URL as Twilio calls it, the files' URLs'
// base: webhook_url, or the URL Twilio's last signed request reached.
func (s *SMS) publicBase() (string, error) {
	base := s.o.WebhookURL
	if base == "" {
		base = s.held.getBase()
	}
	u, err := url.Parse(base)
	if base == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: sms: no address is known that Twilio can fetch a file from: set gateway.sms.webhook_url (the URL Twilio posts texts to), or text the number once", gateway.ErrUndeliverable)
	}
	u.RawQuery, u.Fragment = "", ""
	return strings.TrimRight(u.String(), "/"), nil
}

// SendFile sends f as an MMS to m's chat, with m's text as its body when
// it fits (else the text goes first): Twilio fetches the file from the
// gateway's webhook route. A short plain-text file, which no MMS carries,
// is sent as a text message (sendText). A file over an MMS's 5 MB, of a type Twilio
// does not take, or with no address Twilio can fetch it from is
// gateway.ErrUndeliverable.
func (s *SMS) SendFile(ctx context.Context, m gateway.Outgoing, f gateway.OutFile) (string, error) {
	typ := strings.TrimSpace(strings.SplitN(f.MIME, ";", 2)[0])
	if !mmsTypes[typ] && strings.HasPrefix(typ, "text/") {
		return s.sendText(ctx, m, f)
	}
	switch {
	case len(f.Data) > maxMMS:
		return "", fmt.Errorf("%w: sms: %s is %s, over an MMS's %s", gateway.ErrUndeliverable, f.Name, attach.HumanSize(int64(len(f.Data))), attach.HumanSize(maxMMS))
	case !mmsTypes[typ]:
		return "", fmt.Errorf("%w: sms: %s is %s, which Twilio does not send by MMS (pictures, audio, video, PDF, CSV, vCard, calendar and Office documents it does)", gateway.ErrUndeliverable, f.Name, f.MIME)
	}
	base, err := s.publicBase()
	if err != nil {
		return "", err
	}
	body := ""
	if strings.TrimSpace(m.Text) != "" {
		if parts := s.Parts(m.Text); len(parts) == 1 {
			body = parts[0]
		} else {
			for _, p := range parts {
				if _, err := s.SendPart(ctx, gateway.Outgoing{ChatID: m.ChatID}, p); err != nil {
					return "", err
				}
			}
		}
	}
	now := s.clock()
	expiry := strconv.FormatInt(now.Add(mediaLifetime).Unix(), 10)
	name := linkName(f.Name)
	id := f.ID
	if id == "" || s.read() == nil {
		raw := make([]byte, 16)
		_, _ = rand.Read(raw)
		id = hex.EncodeToString(raw)
		s.held.put(id, heldFile{name: name, mime: typ, data: f.Data, until: now.Add(mediaLifetime)}, now)
	}
	link := base + mediaRoute + id + "/" + expiry + "/" + s.linkSignature(id, expiry, name) + "/" + url.PathEscape(name)
	params := (&twapi.CreateMessageParams{}).SetTo(m.ChatID).SetFrom(s.o.From).SetMediaUrl([]string{link})
	if body != "" {
		params.SetBody(body)
	}
	msg, err := s.api.CreateMessage(params)
	if err != nil {
		var rest *twclient.TwilioRestError
		if errors.As(err, &rest) {
			return "", fmt.Errorf("sms: create message with %s: %d %s", f.Name, rest.Code, rest.Message)
		}
		return "", fmt.Errorf("sms: create message with %s: %s", f.Name, redact(err, s.o.AuthToken))
	}
	if msg.Sid == nil {
		return "", errors.New("sms: create message: Twilio returned no sid")
	}
	return *msg.Sid, nil
}

// sendText sends a text file MMS does not carry as one text message to
// m's chat: m's text, then the file's name and its text as it is; it
// returns the message's id. One that is not UTF-8 text, or that does not
// fit in one text message with its name and m's text, is
// gateway.ErrUndeliverable: a reply of several texts is sent part by part
// with each part recorded (deliver), and a file has no such parts.
func (s *SMS) sendText(ctx context.Context, m gateway.Outgoing, f gateway.OutFile) (string, error) {
	tooLong := fmt.Errorf("%w: sms: %s (%d bytes) does not fit in one text message (%d characters with its name and the message's text), and Twilio sends no plain text by MMS",
		gateway.ErrUndeliverable, f.Name, len(f.Data), Limit)
	switch {
	case len(f.Data) > 4*Limit: // too long whatever it holds: not rendered
		return "", tooLong
	case !utf8.Valid(f.Data):
		return "", fmt.Errorf("%w: sms: %s is not UTF-8 text, and Twilio sends no plain text by MMS", gateway.ErrUndeliverable, f.Name)
	}
	// The file's text as a code block: sent as it is, not read as Markdown.
	body := strings.TrimRight(string(f.Data), "\n")
	if strings.TrimSpace(body) == "" {
		body = "(empty)"
	}
	text := format.Literal(f.Name) + ":\n\n" + format.Fence(body) + "\n" + body + "\n" + format.Fence(body)
	if strings.TrimSpace(m.Text) != "" {
		text = m.Text + "\n\n" + text
	}
	parts := s.Parts(text)
	if len(parts) != 1 {
		return "", tooLong
	}
	return s.SendPart(ctx, gateway.Outgoing{ChatID: m.ChatID}, parts[0])
}

// linkName is a file's name as its URL and Content-Disposition carry it:
// no spaces or separators, at most 40 bytes (the extension kept). Pure.
func linkName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r <= ' ' || r == '/' || r == '\\' || r == '"' || r == '%' || r == 0x7f || !utf8.ValidRune(r) {
			return '_'
		}
		return r
	}, name)
	if len(name) > 40 {
		ext := ""
		if i := strings.LastIndexByte(name, '.'); i > 0 && len(name)-i <= 10 {
			ext = name[i:]
		}
		name = strings.ToValidUTF8(name[:40-len(ext)], "") + ext
	}
	if strings.Trim(name, "._") == "" {
		return "file"
	}
	return name
}

// serveMedia answers Twilio's GET (or HEAD) of a file the gateway sent:
// its link must be signed and not expired, and the file still held. A
// link that does not hold is ErrForged; nothing else is ever served.
func (s *SMS) serveMedia(r *http.Request, rest string) (gateway.Hooking, error) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return gateway.Hooking{}, fmt.Errorf("%w: %s of a file", gateway.ErrForged, r.Method)
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 4 {
		return gateway.Hooking{}, fmt.Errorf("%w: not a file's link", gateway.ErrForged)
	}
	id, expiry, sig := parts[0], parts[1], parts[2]
	name, err := url.PathUnescape(parts[3])
	if err != nil || !hmac.Equal([]byte(sig), []byte(s.linkSignature(id, expiry, name))) {
		return gateway.Hooking{}, fmt.Errorf("%w: a file's link whose signature does not hold", gateway.ErrForged)
	}
	sec, err := strconv.ParseInt(expiry, 10, 64)
	if err != nil || s.clock().After(time.Unix(sec, 0)) {
		return gateway.Hooking{}, fmt.Errorf("%w: a file's link that expired", gateway.ErrForged)
	}
	f, ok := s.held.get(id)
	if !ok && s.read() != nil {
		data, typ, err := s.read()(r.Context(), id)
		if err != nil {
			return gateway.Hooking{}, fmt.Errorf("sms: read the file a link names: %w", err)
		}
		f, ok = heldFile{name: name, mime: typ, data: data}, true
	}
	if !ok || f.name != name {
		return gateway.Hooking{}, errors.New("sms: a file no longer held (sent by another process, or before a restart)")
	}
	return gateway.Hooking{ContentType: f.mime, Body: f.data, Header: http.Header{
		"Content-Disposition": {mime.FormatMediaType("inline", map[string]string{"filename": f.name})},
		"Content-Length":      {strconv.Itoa(len(f.data))},
		"Cache-Control":       {"private, no-store"},
	}}, nil
}
