// Package fakewhatsapp is an in-process fake of the WhatsApp Business
// Cloud API for one business number, the one stand-in for WhatsApp in
// Talaria's tests. It speaks the wire protocols as Meta does: the Graph
// API (a Bearer access token; GET /v21.0/{phone-number-id}; POST
// /v21.0/{phone-number-id}/messages with a text or an interactive
// message, answered with {"messaging_product", "contacts", "messages":
// [{"id": "wamid..."}]}; errors as {"error": {"message", "type", "code",
// "fbtrace_id"}}, among them 131047 when the person's last message is
// more than 24 hours old), and the webhook: the subscription's GET
// handshake (hub.mode, hub.verify_token, hub.challenge) and change
// notifications POSTed as JSON, signed with the app secret
// (X-Hub-Signature-256: sha256= and the hex HMAC-SHA256 of the body).
// Media is the Graph API's too: GET /v21.0/{media-id} tells a media's
// short-lived URL on the lookaside endpoint, which serves its bytes to the
// same token; POST /v21.0/{phone-number-id}/media uploads a file (a
// multipart form) that a document message then names by its id.
// Tests write to the number (Send), send it a picture, voice note or
// document (SendMedia), press a button of an interactive message (Press),
// deliver a notification again (Resend), forge one (Forge) or replay an
// old one (Replay), age a person's last message past the 24-hour window
// (Age), and read what the number sent (Sent, WaitSent, Uploads) and how
// often a media was downloaded (Downloads). Sending can be held after the
// first n calls (embedded fakewire.Hold, route "sendMessage").
package fakewhatsapp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/talaria-agent/talaria/internal/fakewire"
)

// window is how long after a person's last message the business may
// write to them freely.
const window = 24 * time.Hour

// Server is a running fake of the Cloud API for one business number.
type Server struct {
	AccessToken, AppSecret, VerifyToken string
	PhoneNumberID, Display              string
	srv                                 *httptest.Server

	fakewire.Hold
	mu        sync.Mutex
	mediaBase string // SetMediaBase
	webhook   string
	sent      []Message
	inbound   map[string][]byte    // notification bodies, by message id
	lastSeen  map[string]time.Time // each person's last message
	media     map[string]Media     // by media id: sent by people, or uploaded
	uploads   []Media
	downloads map[string]int // media downloads, by media id
}

// Message is a message the number sent.
type Message struct {
	ID, To, Type, Body, ReplyTo string
	// Buttons are an interactive message's choices: reply buttons or list
	// rows, with their ids.
	Buttons []Button
	// Document is a document message's file (its uploaded media, named as
	// the message names it); Body is then its caption.
	Document *Media
}

// Button is a reply button or a list row.
type Button struct {
	ID, Title string
}

// Start starts a fake business number.
func Start() *Server {
	s := &Server{AccessToken: "EAAG" + randomHex(16), AppSecret: randomHex(16), VerifyToken: randomHex(8),
		PhoneNumberID: "1" + fmt.Sprint(time.Now().UnixNano()%1e14), Display: "+1 555-000-0001",
		inbound: map[string][]byte{}, lastSeen: map[string]time.Time{}, media: map[string]Media{}, downloads: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the Graph API's base, with its version.
func (s *Server) URL() string { return s.srv.URL + "/v21.0" }

// Close stops the server.
func (s *Server) Close() {
	s.Release()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// SetWebhook sets the app's callback URL.
func (s *Server) SetWebhook(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhook = u
}

// Verify makes the subscription's handshake with token and reports the
// status and body of the answer.
func (s *Server) Verify(token string) (int, string, error) {
	s.mu.Lock()
	hook := s.webhook
	s.mu.Unlock()
	q := url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {token}, "hub.challenge": {"1158201444"}}
	resp, err := http.Get(hook + "?" + q.Encode())
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String(), nil
}

// Age makes a person's last message d older.
func (s *Server) Age(waID string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastSeen[waID] = s.lastSeen[waID].Add(-d)
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

// Send is a text from a person (their WhatsApp id: the number's digits)
// to the business: the webhook, signed. It returns the message's id and
// the webhook's status.
func (s *Server) Send(from, text string) (string, int, error) {
	return s.notify(from, map[string]any{"type": "text", "text": map[string]any{"body": text}})
}

// Press is a person's press on a reply button or list row of m.
func (s *Server) Press(from string, m Message, id string) (string, int, error) {
	title := ""
	for _, b := range m.Buttons {
		if b.ID == id {
			title = b.Title
		}
	}
	kind, field := "button_reply", "button_reply"
	if len(m.Buttons) > 3 {
		kind, field = "list_reply", "list_reply"
	}
	return s.notify(from, map[string]any{"type": "interactive", "context": map[string]any{"from": strings.TrimPrefix(s.Display, "+"), "id": m.ID},
		"interactive": map[string]any{"type": kind, field: map[string]any{"id": id, "title": title}}})
}

// Replay posts, correctly signed, a text sent age ago: what a captured
// notification replayed later looks like.
func (s *Server) Replay(from, text string, age time.Duration) (int, error) {
	_, status, err := s.notifyAt(from, map[string]any{"type": "text", "text": map[string]any{"body": text}}, time.Now().Add(-age))
	return status, err
}

// notify posts a messages notification carrying one message.
func (s *Server) notify(from string, msg map[string]any) (string, int, error) {
	return s.notifyAt(from, msg, time.Now())
}

func (s *Server) notifyAt(from string, msg map[string]any, at time.Time) (string, int, error) {
	id := "wamid." + randomHex(24)
	msg["from"], msg["id"], msg["timestamp"] = from, id, fmt.Sprint(at.Unix())
	body, _ := json.Marshal(map[string]any{"object": "whatsapp_business_account", "entry": []any{map[string]any{
		"id": "WABA1", "changes": []any{map[string]any{"field": "messages", "value": map[string]any{
			"messaging_product": "whatsapp",
			"metadata":          map[string]any{"display_phone_number": strings.NewReplacer("+", "", " ", "", "-", "").Replace(s.Display), "phone_number_id": s.PhoneNumberID},
			"contacts":          []any{map[string]any{"profile": map[string]any{"name": "Person " + from}, "wa_id": from}},
			"messages":          []any{msg}}}}}}})
	s.mu.Lock()
	s.inbound[id] = body
	s.lastSeen[from] = time.Now()
	s.mu.Unlock()
	status, err := s.post(body, s.AppSecret)
	return id, status, err
}

// Resend delivers the notification of an earlier message again, as Meta
// does when the webhook did not answer 200.
func (s *Server) Resend(id string) (int, error) {
	s.mu.Lock()
	body := s.inbound[id]
	s.mu.Unlock()
	if body == nil {
		return 0, fmt.Errorf("fakewhatsapp: no message %s", id)
	}
	return s.post(body, s.AppSecret)
}

// Forge posts a text whose signature is made with another secret.
func (s *Server) Forge(from, text string) (int, error) {
	body, _ := json.Marshal(map[string]any{"object": "whatsapp_business_account", "entry": []any{map[string]any{"changes": []any{
		map[string]any{"field": "messages", "value": map[string]any{"metadata": map[string]any{"phone_number_id": s.PhoneNumberID},
			"messages": []any{map[string]any{"from": from, "id": "wamid.forged" + randomHex(8), "type": "text", "text": map[string]any{"body": text}}}}}}}}})
	return s.post(body, randomHex(16))
}

func (s *Server) post(body []byte, secret string) (int, error) {
	s.mu.Lock()
	hook := s.webhook
	s.mu.Unlock()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return fakewire.Post(hook, "application/json", body, map[string]string{"X-Hub-Signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil))})
}

// serve is the Graph API.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(r.Body)
	if r.Header.Get("Authorization") != "Bearer "+s.AccessToken {
		writeError(w, http.StatusUnauthorized, 190, "OAuthException", "Invalid OAuth access token - Cannot parse access token")
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v21.0/"+s.PhoneNumberID:
		writeJSON(w, http.StatusOK, map[string]any{"id": s.PhoneNumberID, "display_phone_number": s.Display, "verified_name": "Fake"})
	case r.Method == http.MethodPost && r.URL.Path == "/v21.0/"+s.PhoneNumberID+"/messages":
		if !s.Admit(r, "sendMessage") {
			return
		}
		s.sendMessage(w, raw.Bytes())
	case r.Method == http.MethodPost && r.URL.Path == "/v21.0/"+s.PhoneNumberID+"/media":
		s.upload(w, r, raw.Bytes())
	case r.Method == http.MethodGet && r.URL.Path == lookasidePath:
		s.download(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v21.0/") && s.hasMedia(strings.TrimPrefix(r.URL.Path, "/v21.0/")):
		s.mediaURL(w, strings.TrimPrefix(r.URL.Path, "/v21.0/"))
	default:
		writeError(w, http.StatusBadRequest, 100, "GraphMethodException", "Unsupported request")
	}
}

type outgoing struct {
	Product string `json:"messaging_product"`
	To      string `json:"to"`
	Type    string `json:"type"`
	Context *struct {
		MessageID string `json:"message_id"`
	} `json:"context"`
	Text *struct {
		Body string `json:"body"`
	} `json:"text"`
	Document *struct {
		ID       string `json:"id"`
		Link     string `json:"link"`
		Filename string `json:"filename"`
		Caption  string `json:"caption"`
	} `json:"document"`
	Interactive *struct {
		Type string `json:"type"`
		Body struct {
			Text string `json:"text"`
		} `json:"body"`
		Action struct {
			Buttons []struct {
				Reply Button `json:"reply"`
			} `json:"buttons"`
			Sections []struct {
				Rows []Button `json:"rows"`
			} `json:"sections"`
		} `json:"action"`
	} `json:"interactive"`
}

func (s *Server) sendMessage(w http.ResponseWriter, raw []byte) {
	var o outgoing
	if err := json.Unmarshal(raw, &o); err != nil || o.Product != "whatsapp" || o.To == "" {
		writeError(w, http.StatusBadRequest, 100, "OAuthException", "(#100) Invalid parameter")
		return
	}
	m := Message{ID: "wamid." + randomHex(24), To: o.To, Type: o.Type}
	if o.Context != nil {
		m.ReplyTo = o.Context.MessageID
	}
	switch {
	case o.Type == "text" && o.Text != nil && o.Text.Body != "" && utf8.RuneCountInString(o.Text.Body) <= 4096:
		m.Body = o.Text.Body
	case o.Type == "interactive" && o.Interactive != nil && o.Interactive.Body.Text != "" && utf8.RuneCountInString(o.Interactive.Body.Text) <= 1024:
		m.Body = o.Interactive.Body.Text
		for _, b := range o.Interactive.Action.Buttons {
			m.Buttons = append(m.Buttons, b.Reply)
		}
		for _, sec := range o.Interactive.Action.Sections {
			m.Buttons = append(m.Buttons, sec.Rows...)
		}
		if bad := checkButtons(o.Interactive.Type, m.Buttons); bad != "" {
			writeError(w, http.StatusBadRequest, 131009, "OAuthException", "(#131009) Parameter value is not valid: "+bad)
			return
		}
	case o.Type == "document" && o.Document != nil && o.Document.ID != "" && utf8.RuneCountInString(o.Document.Caption) <= 1024:
		s.mu.Lock()
		doc, ok := s.media[o.Document.ID]
		s.mu.Unlock()
		if !ok {
			writeError(w, http.StatusBadRequest, 131053, "OAuthException", "(#131053) Media upload error: no media with the id "+o.Document.ID)
			return
		}
		doc.Name, m.Body, m.Document = o.Document.Filename, o.Document.Caption, &doc
	default:
		writeError(w, http.StatusBadRequest, 100, "OAuthException", "(#100) Invalid parameter: the message's body is missing or too long")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if seen, ok := s.lastSeen[o.To]; !ok || time.Since(seen) > window {
		writeError(w, http.StatusBadRequest, 131047, "OAuthException", "(#131047) Re-engagement message: more than 24 hours have passed since the recipient last replied to the sender number")
		return
	}
	s.sent = append(s.sent, m)
	writeJSON(w, http.StatusOK, map[string]any{"messaging_product": "whatsapp",
		"contacts": []any{map[string]any{"input": o.To, "wa_id": o.To}}, "messages": []any{map[string]any{"id": m.ID}}})
}

// checkButtons is what is wrong with an interactive message's choices.
func checkButtons(kind string, bs []Button) string {
	limit, title := 3, 20
	if kind == "list" {
		limit, title = 10, 24
	} else if kind != "button" {
		return "interactive.type"
	}
	if len(bs) == 0 || len(bs) > limit {
		return "the number of buttons"
	}
	for _, b := range bs {
		if b.ID == "" || len(b.ID) > 256 || b.Title == "" || utf8.RuneCountInString(b.Title) > title {
			return "a button's id or title"
		}
	}
	return ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status, code int, typ, message string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": message, "type": typ, "code": code, "fbtrace_id": randomHex(8)}})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
