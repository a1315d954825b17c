package sms

import (
	"errors"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	twclient "github.com/twilio/twilio-go/client"

	"github.com/talaria-agent/talaria/internal/faketwilio"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// TestHook: a webhook signed over the URL Twilio called is an update; a
// wrong signature, another URL, another number or account is not.
func TestHook(t *testing.T) {
	t.Parallel()
	const token = "tok"
	s := &SMS{validator: twclient.NewRequestValidator(token), o: Options{AccountSID: "AC1", AuthToken: token, From: "+15550000001"}}
	form := url.Values{"MessageSid": {"SM1"}, "AccountSid": {"AC1"}, "From": {"+15550000042"}, "To": {"+15550000001"}, "Body": {"hi"}}
	other := url.Values{"MessageSid": {"SM2"}, "AccountSid": {"AC1"}, "From": {"+15550000042"}, "To": {"+15559999999"}, "Body": {"hi"}}
	const hook = "http://example.com/webhooks/sms"
	for _, c := range []struct {
		name, url, sig string
		form           url.Values
		forged         bool
		updates        int
	}{
		{"signed", hook, faketwilio.Signature(token, hook, form), form, false, 1},
		{"another token", hook, faketwilio.Signature("x", hook, form), form, true, 0},
		{"signed for another URL", hook, faketwilio.Signature(token, "http://example.com/other", form), form, true, 0},
		{"unsigned", hook, "", form, true, 0},
		{"to another number", hook, faketwilio.Signature(token, hook, other), other, false, 0},
	} {
		body := c.form.Encode()
		r := httptest.NewRequest("POST", c.url, strings.NewReader(body))
		if c.sig != "" {
			r.Header.Set("X-Twilio-Signature", c.sig)
		}
		h, err := s.Hook(r, []byte(body))
		if errors.Is(err, gateway.ErrForged) != c.forged || len(h.Updates) != c.updates {
			t.Errorf("%s: %d updates, err %v", c.name, len(h.Updates), err)
		}
		if c.updates == 1 {
			if u := h.Updates[0]; u.ID != "SM1" || u.User != "+15550000042" || u.Chat.ID != "+15550000042" || u.Text != "hi" {
				t.Errorf("%s: %+v", c.name, u)
			}
		}
	}
	// With webhook_url set, the signature covers it, not the URL the
	// request reached (a proxy in between).
	s.o.WebhookURL = "https://public.example.com/webhooks/sms"
	r := httptest.NewRequest("POST", hook, strings.NewReader(form.Encode()))
	r.Header.Set("X-Twilio-Signature", faketwilio.Signature(token, s.o.WebhookURL, form))
	if _, err := s.Hook(r, []byte(form.Encode())); err != nil {
		t.Errorf("behind a proxy: %v", err)
	}
}

func TestValidPhone(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{"+15551234567": true, "15551234567": false, "+1": false, "+1555abc4567": false, "+1234567890123456": false} {
		if validPhone(s) != want {
			t.Errorf("validPhone(%q) = %v", s, !want)
		}
	}
}
