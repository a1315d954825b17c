// Package sms is the gateway's SMS adapter, on Twilio Messaging with the
// official github.com/twilio/twilio-go (its request validator and its
// Messages resource): a text to the Twilio number comes as a webhook,
// signed with the account's auth token (X-Twilio-Signature), and the
// answer goes out through the REST API. An SMS cannot be edited, so a
// reply is sent once it is whole, split within 1,600 characters, and
// buttons are said in words: a question's choices, and an approval's code
// lines to send back (a sender's number can be forged, so /approve is not
// taken here). The media of an MMS come as files, fetched from Twilio's
// API with the account's credentials (files.go); a file goes out as an
// MMS whose media Twilio fetches from the gateway's own webhook route
// (media.go).
package sms

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	twclient "github.com/twilio/twilio-go/client"
	twapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/internal/gateway/format"
)

// DefaultAPIURL is Twilio's REST API.
const DefaultAPIURL = "https://api.twilio.com"

// Limit is the longest body Twilio sends as one message (it splits it
// into segments the phone joins).
const Limit = 1600

// ErrRefused means Twilio refused the account's credentials: retrying will
// not help.
var ErrRefused = errors.New("sms: Twilio refused the account's credentials")

// Options configure the Twilio number.
type Options struct {
	// APIURL is the REST API (DefaultAPIURL when empty).
	APIURL string
	// AccountSID (AC...) and AuthToken are the account's; the token also
	// signs the webhooks.
	AccountSID, AuthToken string
	// From is the Twilio phone number the agent answers from (E.164).
	From string
	// WebhookURL is the URL Twilio posts to, exactly as configured in
	// Twilio's console (the signature covers it); empty: the URL the
	// request reached, as this process saw it.
	WebhookURL string
}

// SMS is a Twilio phone number.
type SMS struct {
	api       *twapi.ApiService
	validator twclient.RequestValidator
	o         Options
	apiURL    string
	// files fetches media (files.go); held are the files sent, for
	// Twilio to fetch (media.go).
	files *http.Client
	held  held
	now   func() time.Time
}

// New checks the credentials (Fetch Account) and returns the number.
func New(ctx context.Context, o Options) (*SMS, error) {
	switch {
	case !strings.HasPrefix(o.AccountSID, "AC") || o.AuthToken == "":
		return nil, fmt.Errorf("%w: set gateway.sms.account_sid (AC...) and auth_token (TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN)", ErrRefused)
	case !validPhone(o.From):
		return nil, fmt.Errorf("%w: gateway.sms.from (TWILIO_FROM_NUMBER) must be the Twilio number in E.164, such as +15551234567", ErrRefused)
	}
	apiURL := strings.TrimRight(o.APIURL, "/")
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	c := &twclient.Client{Credentials: twclient.NewCredentials(o.AccountSID, o.AuthToken),
		HTTPClient: &http.Client{Timeout: 30 * time.Second, Transport: gateway.Rebase(DefaultAPIURL, apiURL, nil),
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	c.SetAccountSid(o.AccountSID)
	s := &SMS{api: twapi.NewApiServiceWithClient(c), validator: twclient.NewRequestValidator(o.AuthToken), o: o, apiURL: apiURL}
	s.files = s.filesClient()
	done := make(chan error, 1)
	go func() { _, err := s.api.FetchAccount(o.AccountSID); done <- err }()
	var err error
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case err = <-done:
	}
	var rest *twclient.TwilioRestError
	switch {
	case errors.As(err, &rest) && (rest.Status == http.StatusUnauthorized || rest.Status == http.StatusForbidden || rest.Status == http.StatusNotFound):
		return nil, fmt.Errorf("%w: %s says %d %s (check gateway.sms.account_sid and auth_token)", ErrRefused, apiURL, rest.Code, rest.Message)
	case err != nil:
		return nil, fmt.Errorf("sms: connect to %s: %s", apiURL, redact(err, o.AuthToken))
	}
	return s, nil
}

// validPhone reports whether s is an E.164 number. Pure.
func validPhone(s string) bool {
	digits, ok := strings.CutPrefix(s, "+")
	return ok && len(digits) >= 7 && len(digits) <= 15 && strings.Trim(digits, "0123456789") == ""
}

func redact(err error, token string) string {
	if err == nil {
		return ""
	}
	return strings.ReplaceAll(err.Error(), token, "<token>")
}

func (s *SMS) Name() string    { return "sms" }
func (s *SMS) Account() string { return s.o.From }
func (s *SMS) BotName() string { return s.o.From }

// Editless: an SMS cannot be edited.
func (s *SMS) Editless() {}

// CodedApprovals: a sender's number can be forged.
func (s *SMS) CodedApprovals() {}

// Poll is never called: the updates come by webhook (Hook).
func (s *SMS) Poll(ctx context.Context) ([]gateway.Update, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// Ack has nothing to do: Twilio is answered by the webhook's response.
func (s *SMS) Ack(context.Context, gateway.Update) error { return nil }

// twiml is the empty TwiML answer: the reply goes by the REST API.
var twiml = []byte(`<?xml version="1.0" encoding="UTF-8"?><Response></Response>`)

// Hook reads Twilio's incoming-message webhook: a form signed with
// X-Twilio-Signature over the webhook's URL and its parameters. A text
// to another number or account is ignored; an MMS's media are its
// files. Under media/ it serves the files the gateway sends (media.go).
func (s *SMS) Hook(r *http.Request, body []byte) (gateway.Hooking, error) {
	if rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/webhooks/sms"+mediaRoute); ok {
		return s.serveMedia(r, rest)
	}
	if r.Method != http.MethodPost {
		return gateway.Hooking{}, fmt.Errorf("%w: %s, not POST", gateway.ErrForged, r.Method)
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return gateway.Hooking{}, fmt.Errorf("%w: the body is not a form", gateway.ErrForged)
	}
	params := map[string]string{}
	for k := range form {
		params[k] = form.Get(k)
	}
	sig := r.Header.Get("X-Twilio-Signature")
	if sig == "" || !s.validator.Validate(s.webhookURL(r), params, sig) {
		return gateway.Hooking{}, fmt.Errorf("%w: X-Twilio-Signature is missing or wrong", gateway.ErrForged)
	}
	if s.o.WebhookURL == "" {
		s.held.setBase(s.webhookURL(r))
	}
	h := gateway.Hooking{ContentType: "text/xml", Body: twiml}
	if params["AccountSid"] != s.o.AccountSID || params["To"] != s.o.From || params["MessageSid"] == "" || !validPhone(params["From"]) {
		return h, nil
	}
	u := gateway.Update{ID: params["MessageSid"], User: params["From"], MessageID: params["MessageSid"], Text: params["Body"],
		Chat: gateway.Chat{Platform: "sms", Kind: gateway.ChatDM, ID: params["From"]}, Files: filesOf(params, s.fetcher)}
	// An approval's code line sent back is its press.
	if first, _, _ := strings.Cut(strings.TrimSpace(u.Text), "\n"); gateway.IsButtonData(strings.TrimSpace(first)) {
		u.Button, u.CallbackID, u.Text = strings.TrimSpace(first), u.ID, ""
	}
	h.Updates = []gateway.Update{u}
	return h, nil
}

// webhookURL is the URL the signature covers.
func (s *SMS) webhookURL(r *http.Request) string {
	if s.o.WebhookURL != "" {
		return s.o.WebhookURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.RequestURI()
}

// Parts renders text as plain text, split within Limit.
func (s *SMS) Parts(text string) []string {
	out := format.Split(text, Limit, format.FlavourPlain)
	if len(out) == 0 {
		return []string{"(no answer)"}
	}
	return out
}

// SendPart texts one part to m's chat (the user's number); buttons are
// said in words under it.
func (s *SMS) SendPart(_ context.Context, m gateway.Outgoing, part string) (string, error) {
	if choices := gateway.CodeChoices(m.Buttons); choices != "" {
		part = strings.TrimRight(part, "\n") + "\n\n" + choices
	}
	params := (&twapi.CreateMessageParams{}).SetTo(m.ChatID).SetFrom(s.o.From).SetBody(part)
	msg, err := s.api.CreateMessage(params)
	if err != nil {
		var rest *twclient.TwilioRestError
		if errors.As(err, &rest) {
			return "", fmt.Errorf("sms: create message: %d %s", rest.Code, rest.Message)
		}
		return "", errors.New("sms: create message: " + redact(err, s.o.AuthToken))
	}
	if msg.Sid == nil {
		return "", errors.New("sms: create message: Twilio returned no sid")
	}
	return *msg.Sid, nil
}

// Edit cannot be done: an SMS is sent for good.
func (s *SMS) Edit(context.Context, string, string, string, [][]gateway.Button) error {
	return fmt.Errorf("%w: an SMS cannot be edited", gateway.ErrNotEditable)
}

// Typing does nothing: SMS has no typing indicator.
func (s *SMS) Typing(context.Context, string) error { return nil }

// AnswerButton does nothing: SMS has no buttons to press.
func (s *SMS) AnswerButton(context.Context, gateway.Update, string, bool) error { return nil }
