package loop

import (
	"strings"
	"testing"
)

func TestFindKeyClash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want KeyClash
		ok   bool
	}{
		{"distinct keys", `{"command": "ls", "timeout": 5}`, KeyClash{}, false},
		{"empty object", `{}`, KeyClash{}, false},
		{"same key twice", `{"command": "ls", "command": "rm -rf ./x"}`, KeyClash{"command", "command"}, true},
		{"equal but for case", `{"command": "rm -rf ./x", "Command": "ls"}`, KeyClash{"command", "Command"}, true},
		{"all caps", `{"COMMAND": "ls", "command": "x"}`, KeyClash{"COMMAND", "command"}, true},
		{"escaped key", `{"command": "ls", "comm\u0061nd": "x"}`, KeyClash{"command", "command"}, true},
		{"kelvin sign folds to k", "{\"k\": 1, \"\u212a\": 2}", KeyClash{"k", "\u212a"}, true},
		{"long s folds to s", "{\"s\": 1, \"\u017f\": 2}", KeyClash{"s", "\u017f"}, true},
		{"nested object", `{"todos": [{"id": "1", "ID": "2"}]}`, KeyClash{"id", "ID"}, true},
		{"same key in sibling objects", `{"a": {"x": 1}, "b": {"x": 2}}`, KeyClash{}, false},
		{"first clash wins", `{"a": 1, "A": 2, "b": 1, "b": 2}`, KeyClash{"a", "A"}, true},
		{"not an object", `[1, 2]`, KeyClash{}, false},
		{"malformed", `{"a": 1, "a"`, KeyClash{}, false},
		{"not json", `nope`, KeyClash{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := FindKeyClash(tt.text)
			if ok != tt.ok || got != tt.want {
				t.Errorf("FindKeyClash(%s) = %+v, %v; want %+v, %v", tt.text, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestKeyClashError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		clash KeyClash
		has   []string
	}{
		{KeyClash{"command", "command"}, []string{`duplicate key "command"`}},
		{KeyClash{"command", "Command"}, []string{`"command"`, `"Command"`, "differ only in case"}},
	}
	for _, tt := range tests {
		msg := tt.clash.Error()
		for _, h := range tt.has {
			if !strings.Contains(msg, h) {
				t.Errorf("%+v.Error() = %q, missing %q", tt.clash, msg, h)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("message is not one line: %q", msg)
		}
	}
}

func TestArgumentsProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args string
		has  string
	}{
		{`{"command": "ls"}`, ""},
		{``, ""},
		{`{"command": "ls"`, "cut off"},
		{`[1]`, "not a valid JSON object"},
		{`{"command": "rm -rf ./x", "Command": "ls"}`, `keys "command" and "Command" differ only in case`},
		{`{"path": "a", "path": "b"}`, `duplicate key "path"`},
	}
	for _, tt := range tests {
		got := ArgumentsProblem(tt.args)
		if tt.has == "" && got != "" || !strings.Contains(got, tt.has) {
			t.Errorf("ArgumentsProblem(%s) = %q, want it to mention %q", tt.args, got, tt.has)
		}
	}
}
