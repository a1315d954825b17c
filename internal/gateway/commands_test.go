package gateway

import (
	"strings"
	"testing"
)

func TestParseCommand(t *testing.T) {
	for _, tt := range []struct {
		text string
		want Command
		ok   bool
	}{
		{"/stop", Command{Name: "stop"}, true},
		{"  /STOP  ", Command{Name: "stop"}, true},
		{"/steer look at the tests first", Command{Name: "steer", Args: "look at the tests first"}, true},
		{"/approve session", Command{Name: "approve", Args: "session"}, true},
		{"/stop@talaria_bot", Command{Name: "stop"}, true},
		{"/stop@other_bot", Command{}, false},
		{"/queue\nsecond line", Command{Name: "queue", Args: "second line"}, true},
		{"/unknown", Command{}, false},
		{"/", Command{}, false},
		{"stop", Command{}, false},
		{"please /stop", Command{}, false},
	} {
		got, ok := ParseCommand(tt.text, "talaria_bot")
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseCommand(%q) = %+v %v, want %+v %v", tt.text, got, ok, tt.want, tt.ok)
		}
	}
	if help := HelpText(); strings.Count(help, "\n") != len(Commands)-1 || !strings.Contains(help, "/approve [session|always]") {
		t.Errorf("help:\n%s", help)
	}
}
