package fakewhatsapp

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// lookasidePath is the path of the fake's lookaside, which serves media
// bytes as lookaside.fbsbx.com does.
const lookasidePath = "/whatsapp_business/attachments/"

// urlLifetime is how long a media URL the Graph API tells serves.
const urlLifetime = 5 * time.Minute

// typeLimits are the Cloud API's media types and their largest sizes.
var typeLimits = map[string]int64{
	"image/jpeg": 5 << 20, "image/png": 5 << 20,
	"audio/aac": 16 << 20, "audio/amr": 16 << 20, "audio/mpeg": 16 << 20, "audio/mp4": 16 << 20, "audio/ogg": 16 << 20,
	"video/mp4": 16 << 20, "video/3gpp": 16 << 20,
	"text/plain": 100 << 20, "application/pdf": 100 << 20,
	"application/msword": 100 << 20, "application/vnd.openxmlformats-officedocument.wordprocessingml.document": 100 << 20,
	"application/vnd.ms-excel": 100 << 20, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": 100 << 20,
	"application/vnd.ms-powerpoint": 100 << 20, "application/vnd.openxmlformats-officedocument.presentationml.presentation": 100 << 20,
}

// Media is a file on the Cloud API: one a person sent, or one the number
// uploaded.
type Media struct {
	ID, Name, MIME string
	Data           []byte
}

// File is a file a person sends: Type is the message's ("image", "audio",
// "document", "video"), Voice marks an audio recorded in the app (a voice
// note), Caption goes with an image, document or video, Name with a
// document.
type File struct {
	Type, Name, MIME, Caption string
	Voice                     bool
	Data                      []byte
}

// SendMedia is a message with a file from a person to the business: the
// file stored as the Cloud API's media, and the webhook, signed, naming
// it by its id as Meta's does. It returns the message's id, the media's
// id and the webhook's status.
func (s *Server) SendMedia(from string, f File) (msgID, mediaID string, status int, err error) {
	mediaID = randomDigits(16)
	sum := sha256.Sum256(f.Data)
	s.mu.Lock()
	s.media[mediaID] = Media{ID: mediaID, Name: f.Name, MIME: f.MIME, Data: f.Data}
	s.mu.Unlock()
	body := map[string]any{"id": mediaID, "mime_type": f.MIME, "sha256": base64.StdEncoding.EncodeToString(sum[:])}
	switch f.Type {
	case "audio":
		body["voice"] = f.Voice
	case "document":
		body["filename"] = f.Name
	}
	if f.Caption != "" && f.Type != "audio" {
		body["caption"] = f.Caption
	}
	msgID, status, err = s.notify(from, map[string]any{"type": f.Type, f.Type: body})
	return msgID, mediaID, status, err
}

// SetMediaBase makes the media URLs the Graph API tells point to base
// (scheme and host) instead of the fake's own lookaside: what a test sets
// to see a URL on another host refused.
func (s *Server) SetMediaBase(base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mediaBase = base
}

// Uploads are the files the number uploaded, in order.
func (s *Server) Uploads() []Media {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Media(nil), s.uploads...)
}

// Downloads is how often a media's bytes were downloaded.
func (s *Server) Downloads(mediaID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downloads[mediaID]
}

func (s *Server) hasMedia(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.media[id]
	return ok
}

// mediaURL answers GET /{media-id}: the media's URL, type, hash and size.
func (s *Server) mediaURL(w http.ResponseWriter, id string) {
	s.mu.Lock()
	m := s.media[id]
	base := s.mediaBase
	s.mu.Unlock()
	if base == "" {
		base = s.srv.URL
	}
	exp := strconv.FormatInt(time.Now().Add(urlLifetime).Unix(), 10)
	q := url.Values{"mid": {id}, "ext": {exp}, "hash": {s.urlHash(id, exp)}}
	sum := sha256.Sum256(m.Data)
	writeJSON(w, http.StatusOK, map[string]any{"messaging_product": "whatsapp", "url": base + lookasidePath + "?" + q.Encode(),
		"mime_type": m.MIME, "sha256": hex.EncodeToString(sum[:]), "file_size": strconv.Itoa(len(m.Data)), "id": id})
}

// urlHash signs a media URL's id and expiry.
func (s *Server) urlHash(id, exp string) string {
	mac := hmac.New(sha256.New, []byte(s.AppSecret+"lookaside"))
	mac.Write([]byte(id + "/" + exp))
	return hex.EncodeToString(mac.Sum(nil))[:32]
}

// download serves a media's bytes at the URL mediaURL told, to the access
// token, while the URL lives.
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, exp := q.Get("mid"), q.Get("ext")
	sec, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !hmac.Equal([]byte(q.Get("hash")), []byte(s.urlHash(id, exp))) || time.Now().Unix() > sec {
		http.Error(w, "URL signature mismatch", http.StatusForbidden)
		return
	}
	s.mu.Lock()
	m, ok := s.media[id]
	if ok {
		s.downloads[id]++
	}
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", m.MIME)
	w.Header().Set("Content-Length", strconv.Itoa(len(m.Data)))
	_, _ = w.Write(m.Data)
}

// upload answers POST /{phone-number-id}/media: a multipart form with
// messaging_product, type and the file, of a type the Cloud API takes and
// within its size.
func (s *Server) upload(w http.ResponseWriter, r *http.Request, raw []byte) {
	bad := func(code int, msg string) {
		writeError(w, http.StatusBadRequest, code, "OAuthException", msg)
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		bad(100, "(#100) The parameter file is required.")
		return
	}
	form, err := multipart.NewReader(bytes.NewReader(raw), params["boundary"]).ReadForm(int64(len(raw)) + 1)
	if err != nil {
		bad(100, "(#100) Invalid multipart form")
		return
	}
	defer func() { _ = form.RemoveAll() }()
	files := form.File["file"]
	if form.Value["messaging_product"] == nil || form.Value["messaging_product"][0] != "whatsapp" || len(files) != 1 {
		bad(100, "(#100) The parameter messaging_product is required, and one file.")
		return
	}
	typ := ""
	if t := form.Value["type"]; len(t) == 1 {
		typ = t[0]
	}
	limit, ok := typeLimits[typ]
	if !ok || files[0].Header.Get("Content-Type") != typ {
		bad(131053, "(#131053) Media upload error: the type "+typ+" is not supported, or is not the file's")
		return
	}
	f, err := files[0].Open()
	if err != nil {
		bad(100, "(#100) Invalid file")
		return
	}
	data, _ := io.ReadAll(f)
	_ = f.Close()
	if len(data) == 0 || int64(len(data)) > limit {
		bad(131053, fmt.Sprintf("(#131053) Media upload error: %d bytes; a %s is at most %d", len(data), typ, limit))
		return
	}
	m := Media{ID: randomDigits(16), Name: files[0].Filename, MIME: typ, Data: data}
	s.mu.Lock()
	s.media[m.ID] = m
	s.uploads = append(s.uploads, m)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"id": m.ID})
}

// randomDigits is n random decimal digits, not starting with 0: a media
// id as the Graph API makes them.
func randomDigits(n int) string {
	b := []byte(randomHex(n))
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	if b[0] == '0' {
		b[0] = '1'
	}
	return string(b[:n])
}
