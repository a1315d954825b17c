package gateway

import (
	"regexp"
	"strings"
	"testing"
)

func TestSessionKey(t *testing.T) {
	for _, tt := range []struct {
		chat   Chat
		user   string
		groups GroupSessions
		want   string
	}{
		{Chat{Platform: "telegram", Kind: ChatDM, ID: "42"}, "42", GroupPerUser, "telegram:dm:42"},
		{Chat{Platform: "telegram", Kind: ChatDM, ID: "42", Thread: "7"}, "42", GroupPerUser, "telegram:dm:42:7"},
		{Chat{Platform: "telegram", Kind: ChatGroup, ID: "-1001"}, "42", GroupPerUser, "telegram:group:-1001:42"},
		{Chat{Platform: "telegram", Kind: ChatGroup, ID: "-1001", Thread: "3"}, "42", GroupShared, "telegram:group:-1001:3"},
		{Chat{Platform: "slack", Kind: ChatGroup, ID: "C1", Thread: "1700.1"}, "U1", GroupPerUser, "slack:group:C1:1700.1:U1"},
	} {
		if got := SessionKey(tt.chat, tt.user, tt.groups); got != tt.want {
			t.Errorf("SessionKey(%+v, %q, %s) = %q, want %q", tt.chat, tt.user, tt.groups, got, tt.want)
		}
	}
}

func TestSessionID(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$`)
	seen := map[string]string{}
	for _, key := range []string{
		"telegram:dm:42", "telegram:group:-1001:42", "slack:group:C1:1700.1:U1", "slack:group:C1:1700:1:U1",
		"telegram:dm:a/b", "telegram:dm:a_b", "telegram:dm:" + strings.Repeat("9", 300), "telegram:dm:ü",
	} {
		id := SessionID(key)
		if !valid.MatchString(id) {
			t.Errorf("SessionID(%q) = %q: not a session id", key, id)
		}
		if other, ok := seen[id]; ok {
			t.Errorf("keys %q and %q share the id %q", key, other, id)
		}
		seen[id] = key
	}
	if got := SessionID("telegram:dm:42"); got != "telegram.dm.42" {
		t.Errorf("a plain key becomes %q, want telegram.dm.42", got)
	}
}
