package tools

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestSendMessageTarget: home and this_chat resolve to their chats; an
// explicit chat is allowed only when it is one of them; everything else
// (another chat, email, webhooks, a missing home or chat) is refused.
func TestSendMessageTarget(t *testing.T) {
	const home, current = "telegram:42", "slack:C1"
	cases := []struct {
		target, home, current, want string
	}{
		{"home", home, current, home},
		{"this_chat", home, current, current},
		{" this_chat ", home, current, current},
		{"telegram:42", home, current, home},
		{"slack:C1", home, current, current},
		{"telegram:99", home, current, ""},
		{"slack:C2", home, current, ""},
		{"telegram:42", "", current, ""},
		{"email:me@example.com", home, current, ""},
		{"webhook:https://example.com/hook", home, current, ""},
		{"https://example.com/hook", home, current, ""},
		{"telegram:", home, current, ""},
		{"", home, current, ""},
		{"home", "", current, ""},
		{"this_chat", home, "", ""},
		{"telegram:dm:42", home, current, ""},
	}
	for _, c := range cases {
		got, err := DecideTarget(c.target, c.home, c.current)
		if c.want == "" {
			if err == nil || !errors.Is(err, ErrTargetRefused) || strings.Contains(err.Error(), "\n") {
				t.Errorf("DecideTarget(%q, %q, %q) = %q, %v; want a one-line refusal", c.target, c.home, c.current, got, err)
			}
			continue
		}
		if got != c.want || err != nil {
			t.Errorf("DecideTarget(%q, %q, %q) = %q, %v; want %q", c.target, c.home, c.current, got, err, c.want)
		}
	}
}

func TestSendMessageText(t *testing.T) {
	for _, text := range []string{"", " \n\t", strings.Repeat("x", MaxSendMessageBytes+1)} {
		if err := CheckMessageText(text); !errors.Is(err, ErrInvalidArguments) {
			t.Errorf("CheckMessageText(%d bytes) = %v, want invalid", len(text), err)
		}
	}
	if err := CheckMessageText(strings.Repeat("x", MaxSendMessageBytes)); err != nil {
		t.Errorf("16 KiB refused: %v", err)
	}
}

type fakeChats struct{ home, target string }

func (f fakeChats) Home(context.Context) (string, error) { return f.home, nil }
func (f fakeChats) ChatTargetOfSession(_ context.Context, id string) (string, bool, error) {
	return f.target, id == "s1" && f.target != "", nil
}

// TestSendMessageRun: a call sends to the resolved chat under a key made
// of the turn, the model call and the call id; a refused target sends
// nothing.
func TestSendMessageRun(t *testing.T) {
	var sent []string
	tool := SendMessage(fakeChats{home: "telegram:1", target: "telegram:42"},
		func(_ context.Context, target, key, text string, _ []ChatFile) (string, error) {
			sent = append(sent, target+" "+key+" "+text)
			return target, nil
		})
	r, err := NewRegistry(tool)
	if err != nil {
		t.Fatal(err)
	}
	env := Env{SessionID: "s1", TurnID: "t1", ModelCall: 2}
	res := r.Call(t.Context(), env, Call{ID: "c1", Name: SendMessageName, Arguments: `{"target":"this_chat","text":"ping"}`})
	if res.IsError || res.Content != "Sent to telegram:42." {
		t.Fatalf("result %+v", res)
	}
	res = r.Call(t.Context(), env, Call{ID: "c2", Name: SendMessageName, Arguments: `{"target":"telegram:99","text":"ping"}`})
	if !res.IsError || !strings.Contains(res.Content, "neither the home chat nor this chat") {
		t.Fatalf("refusal %+v", res)
	}
	if len(sent) != 1 || sent[0] != "telegram:42 send/t1/2/c1 ping" {
		t.Fatalf("sent %q", sent)
	}
	if _, err := SendMessage(nil, nil).Run(t.Context(), env, []byte(`{"target":"home","text":"x"}`)); err == nil || !strings.Contains(err.Error(), "no messaging gateway") {
		t.Fatalf("without a gateway: %v", err)
	}
}
