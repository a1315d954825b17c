package faketwilio

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/internal/fakewire"
)

const (
	// cdnPath is where the fake's media CDN serves bytes (Twilio's is
	// mms.twiliocdn.com), by a signed URL that lives cdnLifetime.
	cdnPath     = "/mms-media/"
	cdnLifetime = 4 * time.Hour
	// maxMMS is the most media an MMS carries, and maxMediaURLs the most
	// files.
	maxMMS       = 5_000_000
	maxMediaURLs = 10
)

// acceptedTypes are the types Twilio takes for an MMS's media.
var acceptedTypes = map[string]bool{
	"image/jpeg": true, "image/jpg": true, "image/gif": true, "image/png": true, "image/bmp": true, "image/tiff": true,
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

// File is a media a phone sends by MMS.
type File struct {
	ContentType string
	Data        []byte
}

// stored is a media a phone sent, kept as a Media resource of its
// message.
type stored struct {
	MessageSid string
	File
}

// Fetched is what Twilio got fetching a media URL of an MMS the number
// sent: the type and name the URL's answer gave and its bytes, or why the
// fetch failed (the message then fails, as Twilio's does).
type Fetched struct {
	MessageSid, URL, ContentType, Name string
	Data                               []byte
	Err                                string
}

// MMS is an MMS from a phone number to the Twilio number: its media
// stored as Media resources, the webhook, signed, naming them. It returns
// the message's sid and the webhook's HTTP status.
func (s *Server) MMS(from, body string, files ...File) (string, int, error) {
	sid := "MM" + randomHex(16)
	form := url.Values{"MessageSid": {sid}, "SmsSid": {sid}, "SmsMessageSid": {sid}, "AccountSid": {s.AccountSID},
		"MessagingServiceSid": {""}, "From": {from}, "To": {s.Number}, "Body": {body}, "NumMedia": {strconv.Itoa(len(files))},
		"NumSegments": {"1"}, "SmsStatus": {"received"}, "ApiVersion": {"2010-04-01"}, "FromCountry": {"US"}, "ToCountry": {"US"}}
	s.mu.Lock()
	for i, f := range files {
		me := "ME" + randomHex(16)
		s.media[me] = stored{MessageSid: sid, File: f}
		form.Set("MediaUrl"+strconv.Itoa(i), s.srv.URL+"/2010-04-01/Accounts/"+s.AccountSID+"/Messages/"+sid+"/Media/"+me)
		form.Set("MediaContentType"+strconv.Itoa(i), f.ContentType)
	}
	s.inbound[sid] = form
	s.mu.Unlock()
	status, err := s.post(form, "")
	return sid, status, err
}

// Media are the sids of the media of a message a phone sent, in order.
func (s *Server) Media(messageSid string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	form := s.inbound[messageSid]
	for i := 0; form.Get("MediaUrl"+strconv.Itoa(i)) != ""; i++ {
		u := form.Get("MediaUrl" + strconv.Itoa(i))
		out = append(out, u[strings.LastIndexByte(u, '/')+1:])
	}
	return out
}

// Downloads is how often a media's bytes were served.
func (s *Server) Downloads(mediaSid string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downloads[mediaSid]
}

// Fetched is what Twilio got of the media URLs of the MMSs the number
// sent, in the order it fetched them.
func (s *Server) Fetched() []Fetched {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Fetched(nil), s.fetched...)
}

// WaitFetched waits until ok holds for what was fetched, or ctx ends.
func (s *Server) WaitFetched(ctx context.Context, ok func([]Fetched) bool) ([]Fetched, error) {
	return fakewire.Wait(ctx, s.Fetched, ok)
}

// mediaResource answers GET of a Media resource (credentials already
// checked; held as the route "media"): a redirect to the CDN's short-lived URL for its bytes.
func (s *Server) mediaResource(w http.ResponseWriter, r *http.Request, rest string) {
	if !s.Admit(r, "media") {
		return
	}
	msg, me, ok := strings.Cut(rest, "/Media/")
	s.mu.Lock()
	m, found := s.media[me]
	s.mu.Unlock()
	if !ok || !found || m.MessageSid != msg {
		writeError(w, http.StatusNotFound, 20404, "The requested resource was not found")
		return
	}
	exp := strconv.FormatInt(time.Now().Add(cdnLifetime).Unix(), 10)
	http.Redirect(w, r, s.srv.URL+cdnPath+me+"?"+url.Values{"Expires": {exp}, "Signature": {s.cdnSignature(me, exp)}}.Encode(), http.StatusTemporaryRedirect)
}

func (s *Server) cdnSignature(me, exp string) string {
	mac := hmac.New(sha256.New, []byte(s.AuthToken+"cdn"))
	mac.Write([]byte(me + "/" + exp))
	return hex.EncodeToString(mac.Sum(nil))
}

// cdn serves a media's bytes to a signed URL that has not expired.
func (s *Server) cdn(w http.ResponseWriter, r *http.Request) {
	me, exp := strings.TrimPrefix(r.URL.Path, cdnPath), r.URL.Query().Get("Expires")
	sec, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || time.Now().Unix() > sec || !hmac.Equal([]byte(r.URL.Query().Get("Signature")), []byte(s.cdnSignature(me, exp))) {
		http.Error(w, "AccessDenied", http.StatusForbidden)
		return
	}
	s.mu.Lock()
	m, ok := s.media[me]
	if ok && r.Method == http.MethodGet {
		s.downloads[me]++
	}
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", m.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(m.Data)))
	_, _ = w.Write(m.Data)
}

// fetchMedia fetches an MMS's media after Create Message is answered, as
// Twilio does: each URL with HEAD, then GET, without credentials; the
// answer's Content-Type must be one Twilio takes, and the media 5 MB in
// all.
func (s *Server) fetchMedia(m Message) {
	s.fetching.Add(1)
	go func() {
		defer s.fetching.Done()
		total := 0
		for _, u := range m.MediaURLs {
			f := s.fetchOne(u, maxMMS-total)
			f.MessageSid = m.Sid
			total += len(f.Data)
			s.mu.Lock()
			s.fetched = append(s.fetched, f)
			s.mu.Unlock()
		}
	}()
}

// fetchOne fetches one media URL, at most limit bytes.
func (s *Server) fetchOne(rawURL string, limit int) Fetched {
	f := Fetched{URL: rawURL}
	client := &http.Client{Timeout: 30 * time.Second}
	for _, method := range []string{http.MethodHead, http.MethodGet} {
		req, err := http.NewRequestWithContext(s.stopped, method, rawURL, nil)
		if err != nil {
			f.Err = "12300 invalid media URL: " + err.Error()
			return f
		}
		req.Header.Set("User-Agent", "TwilioProxy/1.1")
		resp, err := client.Do(req)
		if err != nil {
			f.Err = "11200 HTTP retrieval failure: " + err.Error()
			return f
		}
		data, _ := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
		resp.Body.Close()
		typ, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		switch {
		case resp.StatusCode != http.StatusOK:
			f.Err = fmt.Sprintf("11200 HTTP retrieval failure: %s answered %d", method, resp.StatusCode)
			return f
		case !acceptedTypes[typ]:
			f.Err = "12300 invalid Content-Type: " + resp.Header.Get("Content-Type")
			return f
		case len(data) > limit:
			f.Err = "30019 content size exceeds the MMS limit"
			return f
		}
		f.ContentType = typ
		if _, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition")); err == nil {
			f.Name = params["filename"]
		}
		if method == http.MethodGet {
			f.Data = data
		}
	}
	return f
}
