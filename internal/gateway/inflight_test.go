package gateway

import "testing"

func TestAccountOf(t *testing.T) {
	for _, tt := range []struct {
		id, want string
		ok       bool
	}{
		{"gateway/telegram/7000/1004", "telegram/7000", true},
		{"gateway/slack/T01/Ev0123/x", "slack/T01", true},
		{"gateway/telegram/7000", "", false},
		{"gateway//7000/1", "", false},
		{"turn/telegram.dm.42/3", "", false},
		{"", "", false},
	} {
		if got, ok := accountOf(tt.id); got != tt.want || ok != tt.ok {
			t.Errorf("accountOf(%q) = %q, %v; want %q, %v", tt.id, got, ok, tt.want, tt.ok)
		}
	}
}
