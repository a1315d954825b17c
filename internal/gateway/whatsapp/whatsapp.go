// Package whatsapp is the gateway's WhatsApp adapter, on the WhatsApp
// Business Cloud API: a message to the business number comes as a
// webhook (a JSON POST signed with the app's secret, X-Hub-Signature-256;
// the subscription's GET handshake answered with the verify token), and
// the answer goes out through the Graph API. A message cannot be edited,
// so a reply is sent once it is whole; choices are interactive reply
// buttons (up to 3) or a list (up to 10). WhatsApp lets a business write
// to a person only within 24 hours of their last message: a delivery
// outside that window fails at once and says so. A picture, voice note,
// sound, document or video comes as a file fetched through the Graph
// API's media endpoint; a file goes out as an uploaded document.
//
// Meta publishes no Go client for the Cloud API; the calls it needs (read
// the number, send a message, and files.go's media) are plain HTTP over
// net/http here.
package whatsapp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/internal/gateway/format"
)

// DefaultAPIURL is the Graph API, at the version the adapter speaks.
const DefaultAPIURL = "https://graph.facebook.com/v21.0"

// Limits of the Cloud API.
const (
	// interactiveBody is the longest body of an interactive message.
	interactiveBody = 1024
	maxReplyButtons = 3
	maxButtonTitle  = 20
	maxListRows     = 10
	maxRowTitle     = 24
)

// Graph API error codes the adapter acts on.
const (
	codeAuth          = 190    // the access token is invalid or expired
	codeOutsideWindow = 131047 // more than 24 hours since the person's last message
	codeNotOnWhatsApp = 131026 // the number cannot receive this message
)

// ErrRefused means the Graph API refused the access token: retrying will
// not help.
var ErrRefused = errors.New("whatsapp: the Graph API refused the access token")

// Options configure the business number.
type Options struct {
	// APIURL is the Graph API with its version (DefaultAPIURL when empty).
	APIURL string
	// AccessToken calls the Graph API; AppSecret checks the webhooks'
	// signatures; VerifyToken answers the subscription's handshake.
	AccessToken, AppSecret, VerifyToken string
	// PhoneNumberID is the business number's id (not the number).
	PhoneNumberID string
}

// WhatsApp is a business number on the Cloud API.
type WhatsApp struct {
	o      Options
	apiURL string
	// http calls the Graph API; files moves media (files.go).
	http, files *http.Client
	display     string // the number, as WhatsApp shows it
	now         func() time.Time
}

// New checks the access token (it reads the number) and returns the
// number.
func New(ctx context.Context, o Options) (*WhatsApp, error) {
	if o.AccessToken == "" || o.AppSecret == "" || o.VerifyToken == "" || o.PhoneNumberID == "" {
		return nil, fmt.Errorf("%w: set gateway.whatsapp.access_token, app_secret, verify_token and phone_number_id (WHATSAPP_ACCESS_TOKEN, WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN, WHATSAPP_PHONE_NUMBER_ID)", ErrRefused)
	}
	w := &WhatsApp{o: o, apiURL: strings.TrimRight(o.APIURL, "/"), http: &http.Client{Timeout: 30 * time.Second}}
	if w.apiURL == "" {
		w.apiURL = DefaultAPIURL
	}
	w.files = w.filesClient()
	var number struct {
		DisplayPhoneNumber string `json:"display_phone_number"`
	}
	err := w.call(ctx, http.MethodGet, "/"+o.PhoneNumberID+"?fields=display_phone_number,verified_name", nil, &number)
	var ge *graphError
	switch {
	case errors.As(err, &ge) && (ge.Code == codeAuth || ge.status == http.StatusUnauthorized):
		return nil, fmt.Errorf("%w: %s (check gateway.whatsapp.access_token / WHATSAPP_ACCESS_TOKEN)", ErrRefused, ge.Message)
	case err != nil:
		return nil, err
	}
	w.display = number.DisplayPhoneNumber
	return w, nil
}

// graphError is the Graph API's error object.
type graphError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
	status  int
}

func (e *graphError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// call makes one Graph API call with the access token.
func (w *WhatsApp) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, w.apiURL+path, body)
	if err != nil {
		return fmt.Errorf("whatsapp: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return w.do(w.http, req, out)
}

// do makes one Graph API request with the access token through client
// and reads its JSON answer into out (when not nil).
func (w *WhatsApp) do(client *http.Client, req *http.Request, out any) error {
	method, path := req.Method, req.URL.Path
	req.Header.Set("Authorization", "Bearer "+w.o.AccessToken)
	resp, err := client.Do(req)
	if err != nil {
		return errors.New("whatsapp: " + strings.ReplaceAll(err.Error(), w.o.AccessToken, "<token>"))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("whatsapp: read the answer: %w", err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error graphError `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error.Message == "" {
			return fmt.Errorf("whatsapp: %s %s: HTTP %d", method, path, resp.StatusCode)
		}
		e.Error.status = resp.StatusCode
		return &e.Error
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("whatsapp: the answer is not JSON: %w", err)
		}
	}
	return nil
}

func (w *WhatsApp) Name() string    { return "whatsapp" }
func (w *WhatsApp) Account() string { return w.o.PhoneNumberID }
func (w *WhatsApp) BotName() string { return w.display }

// Editless: the Cloud API cannot edit a message.
func (w *WhatsApp) Editless() {}

// Poll is never called: the updates come by webhook (Hook).
func (w *WhatsApp) Poll(ctx context.Context) ([]gateway.Update, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// Ack has nothing to do: the webhook's 200 is the acknowledgement.
func (w *WhatsApp) Ack(context.Context, gateway.Update) error { return nil }

// Parts renders text in WhatsApp's formatting, split within a text
// message's 4,096 characters.
func (w *WhatsApp) Parts(text string) []string {
	out := format.Split(text, format.WhatsAppLimit, format.FlavourWhatsApp)
	if len(out) == 0 {
		return []string{"(no answer)"}
	}
	return out
}

// Typing does nothing: the Cloud API shows none for a business.
func (w *WhatsApp) Typing(context.Context, string) error { return nil }

// AnswerButton does nothing: a reply button needs no answer, and a sent
// message cannot be edited.
func (w *WhatsApp) AnswerButton(context.Context, gateway.Update, string, bool) error { return nil }

// Edit cannot be done.
func (w *WhatsApp) Edit(context.Context, string, string, string, [][]gateway.Button) error {
	return fmt.Errorf("%w: a WhatsApp message cannot be edited", gateway.ErrNotEditable)
}

// SendPart sends one part to m's chat (the person's WhatsApp id): with
// buttons, an interactive message when they fit (3 reply buttons, or a
// list of 10), else the text with the choices said in words.
func (w *WhatsApp) SendPart(ctx context.Context, m gateway.Outgoing, part string) (string, error) {
	msg := map[string]any{"messaging_product": "whatsapp", "recipient_type": "individual", "to": m.ChatID}
	if m.ReplyTo != "" {
		msg["context"] = map[string]any{"message_id": m.ReplyTo}
	}
	if in := interactive(part, m.Buttons); in != nil {
		msg["type"], msg["interactive"] = "interactive", in
	} else {
		if choices := gateway.TextChoices(m.Buttons); choices != "" {
			part = strings.TrimRight(part, "\n") + "\n\n" + choices
		}
		msg["type"], msg["text"] = "text", map[string]any{"body": part, "preview_url": false}
	}
	return w.send(ctx, m.ChatID, msg)
}

// send posts a message and returns its id; outside the 24-hour window, or
// to a number not on WhatsApp, it is gateway.ErrUndeliverable.
func (w *WhatsApp) send(ctx context.Context, to string, msg map[string]any) (string, error) {
	var out struct {
		Messages []struct {
			ID string `json:"id"`
		} `json:"messages"`
	}
	err := w.call(ctx, http.MethodPost, "/"+w.o.PhoneNumberID+"/messages", msg, &out)
	var ge *graphError
	switch {
	case errors.As(err, &ge) && ge.Code == codeOutsideWindow:
		return "", fmt.Errorf("%w: whatsapp: %s last wrote more than 24 hours ago; WhatsApp lets a business write to them again only once they write (or with a template message approved by Meta)", gateway.ErrUndeliverable, to)
	case errors.As(err, &ge) && ge.Code == codeNotOnWhatsApp:
		return "", fmt.Errorf("%w: whatsapp: %s cannot receive WhatsApp messages: %s", gateway.ErrUndeliverable, to, ge.Message)
	case err != nil:
		return "", fmt.Errorf("whatsapp: send message: %w", err)
	case len(out.Messages) == 0:
		return "", errors.New("whatsapp: send message: no message id in the answer")
	}
	return out.Messages[0].ID, nil
}

// interactive is the interactive message offering rows of buttons under
// part: reply buttons when there are at most 3, a list when at most 10;
// nil when none fits (or there are no buttons). Pure.
func interactive(part string, rows [][]gateway.Button) map[string]any {
	var flat []gateway.Button
	for _, r := range rows {
		flat = append(flat, r...)
	}
	if len(flat) == 0 || len(flat) > maxListRows || utf8.RuneCountInString(part) > interactiveBody {
		return nil
	}
	body := map[string]any{"text": part}
	if len(flat) <= maxReplyButtons {
		var buttons []any
		for _, b := range flat {
			buttons = append(buttons, map[string]any{"type": "reply", "reply": map[string]any{"id": b.Data, "title": cut(b.Text, maxButtonTitle)}})
		}
		return map[string]any{"type": "button", "body": body, "action": map[string]any{"buttons": buttons}}
	}
	var items []any
	for _, b := range flat {
		items = append(items, map[string]any{"id": b.Data, "title": cut(b.Text, maxRowTitle)})
	}
	return map[string]any{"type": "list", "body": body,
		"action": map[string]any{"button": "Choose", "sections": []any{map[string]any{"title": "Choices", "rows": items}}}}
}

// cut shortens s to n characters. Pure.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// Hook reads the Cloud API's webhook: the subscription's GET handshake
// (hub.verify_token must be the configured one; the answer is
// hub.challenge), or a POST of change notifications signed with the app
// secret (X-Hub-Signature-256). Messages become updates (a text, or the
// press of a reply button or list row); delivery statuses and other
// numbers' messages are ignored.
func (w *WhatsApp) Hook(r *http.Request, body []byte) (gateway.Hooking, error) {
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		if q.Get("hub.mode") != "subscribe" || !hmac.Equal([]byte(q.Get("hub.verify_token")), []byte(w.o.VerifyToken)) {
			return gateway.Hooking{}, fmt.Errorf("%w: hub.verify_token is not the configured one", gateway.ErrForged)
		}
		return gateway.Hooking{ContentType: "text/plain", Body: []byte(q.Get("hub.challenge"))}, nil
	}
	if r.Method != http.MethodPost {
		return gateway.Hooking{}, fmt.Errorf("%w: %s", gateway.ErrForged, r.Method)
	}
	if !w.signed(r.Header.Get("X-Hub-Signature-256"), body) {
		return gateway.Hooking{}, fmt.Errorf("%w: X-Hub-Signature-256 is missing or wrong", gateway.ErrForged)
	}
	var n notification
	if err := json.Unmarshal(body, &n); err != nil {
		return gateway.Hooking{}, fmt.Errorf("whatsapp: the notification is not JSON: %w", err)
	}
	now := time.Now()
	if w.now != nil {
		now = w.now()
	}
	if n.stale(now) {
		return gateway.Hooking{}, fmt.Errorf("%w: a replay: its messages are older than Meta's %s of retries", gateway.ErrForged, maxRetryAge)
	}
	return gateway.Hooking{Updates: n.updates(w.o.PhoneNumberID, w.fetcher)}, nil
}

// maxRetryAge is how long Meta retries a notification that was not
// answered 200: a signed one about older messages is a replay.
const maxRetryAge = 7 * 24 * time.Hour

// stale reports whether the notification's messages are all older than
// maxRetryAge (the signature covers their timestamps). Pure.
func (n notification) stale(now time.Time) bool {
	seen := false
	for _, e := range n.Entry {
		for _, c := range e.Changes {
			for _, m := range c.Value.Messages {
				sec, err := strconv.ParseInt(m.Timestamp, 10, 64)
				if err != nil || now.Sub(time.Unix(sec, 0)) <= maxRetryAge {
					return false
				}
				seen = true
			}
		}
	}
	return seen
}

// signed reports whether sig is "sha256=" and the hex HMAC-SHA256 of body
// keyed with the app secret.
func (w *WhatsApp) signed(sig string, body []byte) bool {
	got, ok := strings.CutPrefix(sig, "sha256=")
	if !ok {
		return false
	}
	raw, err := hex.DecodeString(got)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(w.o.AppSecret))
	mac.Write(body)
	return hmac.Equal(raw, mac.Sum(nil))
}

// notification is a webhook's body, as far as the adapter reads it.
type notification struct {
	Object string `json:"object"`
	Entry  []struct {
		Changes []struct {
			Field string `json:"field"`
			Value struct {
				Metadata struct {
					PhoneNumberID string `json:"phone_number_id"`
				} `json:"metadata"`
				Messages []message `json:"messages"`
			} `json:"value"`
		} `json:"changes"`
	} `json:"entry"`
}

type message struct {
	From      string `json:"from"`
	ID        string `json:"id"`
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Text      struct {
		Body string `json:"body"`
	} `json:"text"`
	Interactive struct {
		Type        string `json:"type"`
		ButtonReply struct {
			ID string `json:"id"`
		} `json:"button_reply"`
		ListReply struct {
			ID string `json:"id"`
		} `json:"list_reply"`
	} `json:"interactive"`
	Context struct {
		ID string `json:"id"`
	} `json:"context"`
	// The media of a picture, voice memo or other sound, document or
	// video (files.go).
	Image    media `json:"image"`
	Audio    media `json:"audio"`
	Document media `json:"document"`
	Video    media `json:"video"`
}

// updates are the messages to phoneNumberID the notification carries;
// the files of media messages are fetched with fetch. Pure.
func (n notification) updates(phoneNumberID string, fetch func(media) fetchFunc) []gateway.Update {
	var out []gateway.Update
	if n.Object != "whatsapp_business_account" {
		return nil
	}
	for _, e := range n.Entry {
		for _, c := range e.Changes {
			if c.Field != "messages" || c.Value.Metadata.PhoneNumberID != phoneNumberID {
				continue
			}
			for _, m := range c.Value.Messages {
				if m.ID == "" || m.From == "" {
					continue
				}
				u := gateway.Update{ID: m.ID, User: m.From, MessageID: m.ID,
					Chat: gateway.Chat{Platform: "whatsapp", Kind: gateway.ChatDM, ID: m.From}}
				switch {
				case m.Type == "text":
					u.Text = m.Text.Body
				case m.Type == "interactive" && m.Interactive.Type == "button_reply":
					u.Button, u.CallbackID, u.MessageID = m.Interactive.ButtonReply.ID, m.ID, m.Context.ID
				case m.Type == "interactive" && m.Interactive.Type == "list_reply":
					u.Button, u.CallbackID, u.MessageID = m.Interactive.ListReply.ID, m.ID, m.Context.ID
				case m.file() != nil:
					f := m.file()
					u.Text, u.Files = f.Caption, []gateway.File{f.file(fetch)}
				default:
					u.Text = "(a message of type " + m.Type + ", which this agent cannot read yet)"
				}
				out = append(out, u)
			}
		}
	}
	return out
}
