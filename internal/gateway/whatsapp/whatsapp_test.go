package whatsapp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/gateway"
)

func sign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// TestHook: the handshake, the signature, and what a notification's
// messages become.
func TestHook(t *testing.T) {
	t.Parallel()
	w := &WhatsApp{o: Options{AppSecret: "s3cret", VerifyToken: "vt", PhoneNumberID: "PN1"}}
	const text = `{"object":"whatsapp_business_account","entry":[{"changes":[{"field":"messages","value":{"metadata":{"phone_number_id":"PN1"},
"messages":[{"from":"155","id":"wamid.1","type":"text","text":{"body":"hi"}},
{"from":"155","id":"wamid.2","type":"interactive","context":{"id":"wamid.q"},"interactive":{"type":"button_reply","button_reply":{"id":"q:1:ab","title":"blue"}}},
{"from":"155","id":"wamid.3","type":"interactive","context":{"id":"wamid.a"},"interactive":{"type":"list_reply","list_reply":{"id":"ap:once:ab","title":"Approve once"}}},
{"from":"155","id":"wamid.4","type":"sticker"}]}},
{"field":"messages","value":{"metadata":{"phone_number_id":"OTHER"},"messages":[{"from":"155","id":"wamid.5","type":"text","text":{"body":"not ours"}}]}}]}]}`
	old := fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"changes":[{"field":"messages","value":{"metadata":{"phone_number_id":"PN1"},
"messages":[{"from":"155","id":"wamid.9","timestamp":"%d","type":"text","text":{"body":"hi"}}]}}]}]}`, time.Now().Add(-8*24*time.Hour).Unix())
	cases := []struct {
		name, method, target, sig, body string
		forged                          bool
		ids                             []string
	}{
		{"handshake", "GET", "/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=vt&hub.challenge=42", "", "", false, nil},
		{"handshake, wrong token", "GET", "/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=x&hub.challenge=42", "", "", true, nil},
		{"signed", "POST", "/webhooks/whatsapp", sign("s3cret", text), text, false, []string{"wamid.1", "wamid.2", "wamid.3", "wamid.4"}},
		{"signed with another secret", "POST", "/webhooks/whatsapp", sign("other", text), text, true, nil},
		{"unsigned", "POST", "/webhooks/whatsapp", "", text, true, nil},
		{"not hex", "POST", "/webhooks/whatsapp", "sha256=zz", text, true, nil},
		{"a replay of messages 8 days old", "POST", "/webhooks/whatsapp", sign("s3cret", old), old, true, nil},
		{"a status, no message", "POST", "/webhooks/whatsapp", sign("s3cret", `{"object":"whatsapp_business_account","entry":[]}`), `{"object":"whatsapp_business_account","entry":[]}`, false, nil},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, c.target, strings.NewReader(c.body))
		if c.sig != "" {
			r.Header.Set("X-Hub-Signature-256", c.sig)
		}
		h, err := w.Hook(r, []byte(c.body))
		if errors.Is(err, gateway.ErrForged) != c.forged || (!c.forged && err != nil) {
			t.Errorf("%s: err %v", c.name, err)
			continue
		}
		var ids []string
		for _, u := range h.Updates {
			ids = append(ids, u.ID)
		}
		if strings.Join(ids, ",") != strings.Join(c.ids, ",") {
			t.Errorf("%s: updates %v, want %v", c.name, ids, c.ids)
		}
		if c.name == "handshake" && string(h.Body) != "42" {
			t.Errorf("handshake answered %q", h.Body)
		}
		if c.name == "signed" {
			if u := h.Updates[1]; u.Button != "q:1:ab" || u.MessageID != "wamid.q" || u.Chat.ID != "155" {
				t.Errorf("button reply %+v", u)
			}
			if u := h.Updates[2]; u.Button != "ap:once:ab" || u.MessageID != "wamid.a" {
				t.Errorf("list reply %+v", u)
			}
			if u := h.Updates[3]; !strings.Contains(u.Text, "sticker") {
				t.Errorf("a sticker: %+v", u)
			}
		}
	}
}

func TestInteractive(t *testing.T) {
	t.Parallel()
	b := func(n int) [][]gateway.Button {
		var rows [][]gateway.Button
		for i := range n {
			rows = append(rows, []gateway.Button{{Text: strings.Repeat("x", 30), Data: "q:" + string(rune('0'+i)) + ":ab"}})
		}
		return rows
	}
	for _, c := range []struct {
		name string
		part string
		rows [][]gateway.Button
		kind string
	}{
		{"none", "q", nil, ""},
		{"three are buttons", "q", b(3), "button"},
		{"four are a list", "q", b(4), "list"},
		{"ten are a list", "q", b(10), "list"},
		{"eleven do not fit", "q", b(11), ""},
		{"a long body does not fit", strings.Repeat("x", 1025), b(2), ""},
	} {
		got := interactive(c.part, c.rows)
		kind, _ := got["type"].(string)
		if kind != c.kind {
			t.Errorf("%s: %v, want %q", c.name, got, c.kind)
		}
	}
	if got := cut("Approve once for the whole session", 20); len([]rune(got)) != 20 {
		t.Errorf("cut: %q", got)
	}
}
