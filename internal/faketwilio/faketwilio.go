// Package faketwilio is an in-process fake of Twilio Messaging for one
// account and phone number, the one stand-in for Twilio in Talaria's
// tests. It speaks the wire protocols as Twilio does: the REST API
// (HTTP Basic auth with the account SID and auth token; Fetch Account,
// GET /2010-04-01/Accounts/{sid}.json; Create Message, POST
// /2010-04-01/Accounts/{sid}/Messages.json with a form, answered 201 with
// the message's JSON; errors as {"code", "message", "more_info",
// "status"}), and the incoming-message webhook: a form POSTed to the URL
// the test sets, signed as Twilio signs it (X-Twilio-Signature: base64
// HMAC-SHA1, keyed with the auth token, of the URL followed by each
// parameter's name and value in name order). Media are Twilio's too: an
// MMS to the number names each of its media by the URL of a Media
// resource (NumMedia, MediaUrl{N}, MediaContentType{N}), which serves
// its bytes to the account's credentials by a redirect to a short-lived
// CDN URL; an MMS the number sends names its media by URL (MediaUrl), and
// the fake fetches each after answering, as Twilio does (HEAD, then GET;
// an accepted type; 5 MB in all), and records what it got. Tests text the
// number (Text), send it an MMS (MMS), deliver a webhook again (Resend),
// forge one (Forge), and read what the number sent (Sent, WaitSent,
// Fetched, WaitFetched) and how often a media was downloaded
// (Downloads). Create Message ("createMessage") and the Media resources
// a downloader reads ("media") can be held after the first n calls (After,
// Held, Release: fakewire.Hold); Create Message can be refused (FailNext).
package faketwilio

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/talaria-agent/talaria/internal/fakewire"
)

// bodyLimit is the longest body Create Message takes.
const bodyLimit = 1600

// Server is a running fake of Twilio for one account and number.
type Server struct {
	AccountSID, AuthToken, Number string
	srv                           *httptest.Server

	fakewire.Hold
	mu        sync.Mutex
	webhook   string
	sent      []Message
	inbound   map[string]url.Values // by MessageSid
	failNext  int
	media     map[string]stored // media people sent, by MediaSid
	downloads map[string]int    // by MediaSid
	fetched   []Fetched
	fetching  sync.WaitGroup
	stop      context.CancelFunc
	stopped   context.Context
}

// Message is a text the number sent; MediaURLs are an MMS's media, as
// Create Message was given them (what Twilio fetched of them: Fetched).
type Message struct {
	Sid, To, From, Body string
	MediaURLs           []string
	At                  time.Time
}

// Start starts a fake Twilio account with a phone number (E.164).
func Start(number string) *Server {
	s := &Server{AccountSID: "AC" + randomHex(16), AuthToken: randomHex(16), Number: number, inbound: map[string]url.Values{},
		media: map[string]stored{}, downloads: map[string]int{}}
	s.stopped, s.stop = context.WithCancel(context.Background())
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the REST API's base ("http://127.0.0.1:port").
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server.
func (s *Server) Close() {
	s.stop()
	s.fetching.Wait()
	s.Release()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// SetWebhook sets the URL incoming messages are POSTed to, as the
// number's "A message comes in" setting does.
func (s *Server) SetWebhook(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhook = u
}

// FailNext makes the next n Create Message calls fail with a 500.
func (s *Server) FailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext += n
}

// Sent is every message the number sent, in order.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.sent...)
}

// WaitSent waits until ok holds for the sent messages, or ctx ends.
func (s *Server) WaitSent(ctx context.Context, ok func([]Message) bool) ([]Message, error) {
	return fakewire.Wait(ctx, s.Sent, ok)
}

// Text is a text from a phone number to the Twilio number: the webhook,
// signed. It returns the message's sid and the webhook's HTTP status.
func (s *Server) Text(from, body string) (string, int, error) {
	sid := "SM" + randomHex(16)
	form := url.Values{"MessageSid": {sid}, "SmsSid": {sid}, "SmsMessageSid": {sid}, "AccountSid": {s.AccountSID},
		"MessagingServiceSid": {""}, "From": {from}, "To": {s.Number}, "Body": {body}, "NumMedia": {"0"}, "NumSegments": {"1"},
		"SmsStatus": {"received"}, "ApiVersion": {"2010-04-01"}, "FromCountry": {"US"}, "ToCountry": {"US"}}
	s.mu.Lock()
	s.inbound[sid] = form
	s.mu.Unlock()
	status, err := s.post(form, "")
	return sid, status, err
}

// Resend delivers the webhook of an earlier text again, as Twilio does
// when its request failed or timed out.
func (s *Server) Resend(sid string) (int, error) {
	s.mu.Lock()
	form := s.inbound[sid]
	s.mu.Unlock()
	if form == nil {
		return 0, fmt.Errorf("faketwilio: no text %s", sid)
	}
	return s.post(form, "")
}

// Forge posts a text whose signature is wrong (signed with another
// token).
func (s *Server) Forge(from, body string) (int, error) {
	sid := "SM" + randomHex(16)
	form := url.Values{"MessageSid": {sid}, "AccountSid": {s.AccountSID}, "From": {from}, "To": {s.Number}, "Body": {body}}
	return s.post(form, randomHex(16))
}

// post sends a webhook, signed with token (the auth token when "").
func (s *Server) post(form url.Values, token string) (int, error) {
	s.mu.Lock()
	hook := s.webhook
	s.mu.Unlock()
	if hook == "" {
		return 0, fmt.Errorf("faketwilio: no webhook set")
	}
	if token == "" {
		token = s.AuthToken
	}
	return fakewire.Post(hook, "application/x-www-form-urlencoded", []byte(form.Encode()),
		map[string]string{"X-Twilio-Signature": Signature(token, hook, form), "User-Agent": "TwilioProxy/1.1"})
}

// Signature is how Twilio signs a webhook: base64 of HMAC-SHA1, keyed
// with the auth token, of the URL and then each parameter's name and
// value, in the order of the names. Pure.
func Signature(token, rawURL string, form url.Values) string {
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteString(rawURL)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteString(form.Get(k))
	}
	mac := hmac.New(sha1.New, []byte(token))
	mac.Write(b.Bytes())
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// serve is the REST API, and the media CDN it redirects to.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, cdnPath) {
		s.cdn(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, 20001, "Invalid form")
		return
	}
	user, pass, ok := r.BasicAuth()
	if !ok || user != s.AccountSID || pass != s.AuthToken {
		writeError(w, http.StatusUnauthorized, 20003, "Authenticate")
		return
	}
	base := "/2010-04-01/Accounts/" + s.AccountSID
	switch {
	case r.Method == http.MethodGet && r.URL.Path == base+".json":
		writeJSON(w, http.StatusOK, map[string]any{"sid": s.AccountSID, "friendly_name": "Fake", "status": "active", "type": "Full"})
	case r.Method == http.MethodPost && r.URL.Path == base+"/Messages.json":
		s.createMessage(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, base+"/Messages/"):
		s.mediaResource(w, r, strings.TrimPrefix(r.URL.Path, base+"/Messages/"))
	default:
		writeError(w, http.StatusNotFound, 20404, "The requested resource was not found")
	}
}

func (s *Server) createMessage(w http.ResponseWriter, r *http.Request) {
	if !s.Admit(r, "createMessage") {
		return
	}
	to, from, body, media := r.PostForm.Get("To"), r.PostForm.Get("From"), r.PostForm.Get("Body"), r.PostForm["MediaUrl"]
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.failNext > 0:
		s.failNext--
		writeError(w, http.StatusInternalServerError, 20500, "Internal Server Error")
		return
	case from != s.Number:
		writeError(w, http.StatusBadRequest, 21606, "The From phone number is not a valid, SMS-capable inbound phone number or short code for your account.")
		return
	case !strings.HasPrefix(to, "+") || len(to) < 8:
		writeError(w, http.StatusBadRequest, 21211, "Invalid 'To' Phone Number")
		return
	case body == "" && len(media) == 0:
		writeError(w, http.StatusBadRequest, 21619, "A text message body or media URL must be specified.")
		return
	case len(media) > maxMediaURLs:
		writeError(w, http.StatusBadRequest, 21623, "Number of media files exceeds allowed limit.")
		return
	case utf8.RuneCountInString(body) > bodyLimit:
		writeError(w, http.StatusBadRequest, 21617, "The concatenated message body exceeds the 1600 character limit.")
		return
	}
	m := Message{Sid: "SM" + randomHex(16), To: to, From: from, Body: body, MediaURLs: media, At: time.Now()}
	if len(media) > 0 {
		m.Sid = "MM" + randomHex(16)
		s.fetchMedia(m)
	}
	s.sent = append(s.sent, m)
	writeJSON(w, http.StatusCreated, map[string]any{"sid": m.Sid, "account_sid": s.AccountSID, "to": to, "from": from, "body": body,
		"status": "queued", "num_segments": "1", "direction": "outbound-api", "api_version": "2010-04-01",
		"date_created": m.At.UTC().Format(time.RFC1123Z), "uri": "/2010-04-01/Accounts/" + s.AccountSID + "/Messages/" + m.Sid + ".json"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status, code int, message string) {
	writeJSON(w, status, map[string]any{"code": code, "message": message, "more_info": fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code), "status": status})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
