package whatsapp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// Files on the Cloud API. A media message (image, audio, document,
// video) carries its media's id; GET /{media-id} with the access token
// tells a short-lived URL, on Meta's lookaside host, that serves the bytes
// to the same token. A document goes out as an upload (POST
// /{phone-number-id}/media, multipart) and then a document message naming
// the uploaded media's id.

// lookasideHost is where Meta serves a media's bytes.
const lookasideHost = "lookaside.fbsbx.com"

// mediaLimits are the Cloud API's largest media, by message type.
var mediaLimits = map[string]int64{"image": 5 << 20, "audio": 16 << 20, "video": 16 << 20, "document": 100 << 20}

// maxDocument is the largest document the Cloud API sends.
const maxDocument = 100 << 20

// captionLimit is the longest caption of a media message.
const captionLimit = 1024

// documentTypes are the types a document may have on the Cloud API.
var documentTypes = map[string]bool{
	"text/plain": true, "application/pdf": true,
	"application/msword": true, "application/vnd.openxmlformats-officedocument.wordprocessingml.document": true,
	"application/vnd.ms-excel": true, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": true,
	"application/vnd.ms-powerpoint": true, "application/vnd.openxmlformats-officedocument.presentationml.presentation": true,
}

// fetchFunc downloads a file, at most max bytes.
type fetchFunc = func(ctx context.Context, max int64) ([]byte, error)

// media is the file of a media message, as the webhook tells it.
type media struct {
	ID       string `json:"id"`
	MIME     string `json:"mime_type"`
	Filename string `json:"filename"`
	Caption  string `json:"caption"`
	// Voice: an audio recorded in the app (a voice note).
	Voice bool `json:"voice"`
	// kind is the message's type, which bounds the file's size.
	kind string
}

// file is the message's media, nil when it has none. Pure.
func (m message) file() *media {
	var f media
	switch m.Type {
	case "image":
		f = m.Image
	case "audio":
		f = m.Audio
	case "document":
		f = m.Document
	case "video":
		f = m.Video
	default:
		return nil
	}
	if f.ID == "" {
		return nil
	}
	f.kind = m.Type
	return &f
}

// file is f as the gateway takes it. Pure.
func (f media) file(fetch func(media) fetchFunc) gateway.File {
	return gateway.File{Name: f.Filename, MIME: f.MIME, Voice: f.kind == "audio" && f.Voice, Fetch: fetch(f)}
}

// filesClient moves media: a longer timeout than an API call's, and no
// redirect off the hosts media is fetched from.
func (w *WhatsApp) filesClient() *http.Client {
	return &http.Client{Timeout: 5 * time.Minute, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 3 || !w.mediaHost(req.URL) {
			return errors.New("whatsapp: a redirect off the Graph API's and Meta's media hosts refused")
		}
		return nil
	}}
}

// mediaHost reports whether u is on a host the access token is shown to
// for a media's bytes: the configured Graph API's, or Meta's lookaside
// (https only).
func (w *WhatsApp) mediaHost(u *url.URL) bool {
	api, err := url.Parse(w.apiURL)
	if err != nil || u.User != nil {
		return false
	}
	if u.Scheme == api.Scheme && strings.EqualFold(u.Host, api.Host) {
		return true
	}
	return u.Scheme == "https" && strings.EqualFold(u.Hostname(), lookasideHost) && (u.Port() == "" || u.Port() == "443")
}

// size is a media's size as the Graph API tells it: a number or a string
// of digits.
type size int64

func (s *size) UnmarshalJSON(b []byte) error {
	n, err := strconv.ParseInt(strings.Trim(string(b), `"`), 10, 64)
	if err != nil {
		return fmt.Errorf("whatsapp: file_size %s: %w", b, err)
	}
	*s = size(n)
	return nil
}

// fetcher downloads a media: its URL from GET /{media-id}, then its bytes
// from that URL, both with the access token; at most max bytes, and at
// most the Cloud API's limit for its type. A size told over the bound is
// refused before anything is downloaded; a URL on any other host is
// never fetched.
func (w *WhatsApp) fetcher(f media) fetchFunc {
	return func(ctx context.Context, max int64) ([]byte, error) {
		if limit, ok := mediaLimits[f.kind]; ok {
			max = min(max, limit)
		}
		if f.ID == "" || url.PathEscape(f.ID) != f.ID || strings.Trim(f.ID, ".") == "" {
			return nil, fmt.Errorf("whatsapp: media id %q", f.ID)
		}
		var meta struct {
			URL  string `json:"url"`
			Size size   `json:"file_size"`
		}
		if err := w.call(ctx, http.MethodGet, "/"+f.ID, nil, &meta); err != nil {
			return nil, fmt.Errorf("whatsapp: look up media %s: %w", f.ID, err)
		}
		if int64(meta.Size) > max {
			return nil, fmt.Errorf("%w: %s, at most %s", attach.ErrTooLarge, attach.HumanSize(int64(meta.Size)), attach.HumanSize(max))
		}
		u, err := url.Parse(meta.URL)
		if err != nil || !w.mediaHost(u) {
			host := ""
			if u != nil {
				host = u.Host
			}
			return nil, fmt.Errorf("whatsapp: media %s: its URL's host %q is neither the Graph API's nor %s: not fetched", f.ID, host, lookasideHost)
		}
		data, err := gateway.Download(ctx, w.files, u.String(), max, func(r *http.Request) {
			r.Header.Set("Authorization", "Bearer "+w.o.AccessToken)
		})
		switch {
		case errors.Is(err, attach.ErrTooLarge):
			return nil, err
		case err != nil:
			return nil, fmt.Errorf("whatsapp: download media %s: %s", f.ID, strings.ReplaceAll(err.Error(), w.o.AccessToken, "<token>"))
		}
		return data, nil
	}
}

// SendFile uploads f and sends it as a document to m's chat, with m's
// text as its caption when it fits (else the text goes first). A type the
// Cloud API takes no document of, a file over its 100 MB, or a person
// outside the 24-hour window is gateway.ErrUndeliverable.
func (w *WhatsApp) SendFile(ctx context.Context, m gateway.Outgoing, f gateway.OutFile) (string, error) {
	typ, ok := documentType(f.MIME, f.Data)
	switch {
	case !ok:
		return "", fmt.Errorf("%w: whatsapp: %s is %s; WhatsApp sends documents only as text, PDF, Word, Excel or PowerPoint", gateway.ErrUndeliverable, f.Name, f.MIME)
	case len(f.Data) == 0:
		return "", fmt.Errorf("%w: whatsapp: %s is empty", gateway.ErrUndeliverable, f.Name)
	case len(f.Data) > maxDocument:
		return "", fmt.Errorf("%w: whatsapp: %s is %s, over WhatsApp's %s for a document", gateway.ErrUndeliverable, f.Name, attach.HumanSize(int64(len(f.Data))), attach.HumanSize(maxDocument))
	}
	caption := ""
	if strings.TrimSpace(m.Text) != "" {
		if parts := w.Parts(m.Text); len(parts) == 1 && utf8.RuneCountInString(parts[0]) <= captionLimit {
			caption = parts[0]
		} else {
			for _, p := range parts {
				if _, err := w.SendPart(ctx, gateway.Outgoing{ChatID: m.ChatID, ReplyTo: m.ReplyTo}, p); err != nil {
					return "", err
				}
			}
		}
	}
	id, err := w.upload(ctx, f.Name, typ, f.Data)
	if err != nil {
		return "", err
	}
	doc := map[string]any{"id": id, "filename": f.Name}
	if caption != "" {
		doc["caption"] = caption
	}
	msg := map[string]any{"messaging_product": "whatsapp", "recipient_type": "individual", "to": m.ChatID, "type": "document", "document": doc}
	if m.ReplyTo != "" {
		msg["context"] = map[string]any{"message_id": m.ReplyTo}
	}
	return w.send(ctx, m.ChatID, msg)
}

// upload puts a file into the Cloud API's media (POST
// /{phone-number-id}/media, a multipart form) and returns its id.
func (w *WhatsApp) upload(ctx context.Context, name, typ string, data []byte) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("messaging_product", "whatsapp")
	_ = mw.WriteField("type", typ)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	h.Set("Content-Type", typ)
	part, err := mw.CreatePart(h)
	if err != nil {
		return "", fmt.Errorf("whatsapp: upload %s: %w", name, err)
	}
	_, _ = part.Write(data)
	if err := mw.Close(); err != nil {
		return "", fmt.Errorf("whatsapp: upload %s: %w", name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.apiURL+"/"+w.o.PhoneNumberID+"/media", &body)
	if err != nil {
		return "", fmt.Errorf("whatsapp: upload %s: %w", name, err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	var out struct {
		ID string `json:"id"`
	}
	if err := w.do(w.files, req, &out); err != nil {
		return "", fmt.Errorf("whatsapp: upload %s: %w", name, err)
	}
	if out.ID == "" {
		return "", fmt.Errorf("whatsapp: upload %s: no media id in the answer", name)
	}
	return out.ID, nil
}

// documentType is the type a file goes out as a document with: its own
// when the Cloud API takes documents of it, text/plain for any other
// text (Markdown, CSV, JSON ...; its name keeps its extension); false for
// a type no document may have. Pure.
func documentType(mime string, data []byte) (string, bool) {
	mime = strings.ToLower(strings.TrimSpace(strings.SplitN(mime, ";", 2)[0]))
	if documentTypes[mime] {
		return mime, true
	}
	textual := strings.HasPrefix(mime, "text/") || strings.HasSuffix(mime, "json") || strings.HasSuffix(mime, "xml") || strings.Contains(mime, "yaml")
	if textual && utf8.Valid(data) && !bytes.ContainsRune(data, 0) {
		return "text/plain", true
	}
	return "", false
}

var _ gateway.FileSender = (*WhatsApp)(nil)
