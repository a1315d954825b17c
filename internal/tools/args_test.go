package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseArgsStrictKeys(t *testing.T) {
	tests := []struct {
		name   string
		raw    string
		errHas string
	}{
		{"plain", `{"command": "ls"}`, ""},
		{"empty", ``, ""},
		{"duplicate key", `{"command": "ls", "command": "rm -rf ./x"}`, `duplicate key "command"`},
		{"equal but for case", `{"command": "rm -rf ./x", "Command": "ls"}`, `keys "command" and "Command" differ only in case`},
		{"nested clash", `{"todos": [{"id": "1", "Id": "2"}]}`, `keys "id" and "Id"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseArgs("terminal", json.RawMessage(tt.raw))
			if tt.errHas == "" {
				if err != nil {
					t.Fatalf("parseArgs(%s): %v", tt.raw, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidArguments) || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("parseArgs(%s) = %v, want invalid arguments mentioning %q", tt.raw, err, tt.errHas)
			}
		})
	}
}

// TestTerminalCommandIsWhatRuns: approval reads the command through
// TerminalCommand; whenever it finds one, the tool runs exactly that, and
// whenever it finds none the tool refuses to run.
func TestTerminalCommandIsWhatRuns(t *testing.T) {
	tests := []struct {
		raw  string
		want string
		ok   bool
	}{
		{`{"command": "ls"}`, "ls", true},
		{`{"command": "rm -rf ./x", "Command": "ls"}`, "", false},
		{`{"Command": "ls", "command": "rm -rf ./x"}`, "", false},
		{`{"command": "ls", "command": "rm -rf ./x"}`, "", false},
		{`{"Command": "rm -rf ./x"}`, "", false},
		{`{"COMMAND": "rm -rf ./x"}`, "", false},
		{`{"command": "   "}`, "", false},
		{`{"command": 5}`, "", false},
		{`{"command": "echo hi", "timeout": 5}`, "echo hi", true},
		{`[]`, "", false},
	}
	for _, tt := range tests {
		got, ok := TerminalCommand(tt.raw)
		if got != tt.want || ok != tt.ok {
			t.Errorf("TerminalCommand(%s) = %q, %v; want %q, %v", tt.raw, got, ok, tt.want, tt.ok)
		}
		_, err := runTool(t, Terminal, Env{Workdir: t.TempDir()}, strings.Replace(tt.raw, "rm -rf ./x", "echo ran", 1))
		if !tt.ok && !errors.Is(err, ErrInvalidArguments) {
			t.Errorf("terminal ran %s: %v", tt.raw, err)
		}
	}
}

func TestParseClarifyStrict(t *testing.T) {
	tests := []struct {
		raw  string
		want ClarifyArgs
		ok   bool
	}{
		{`{"question": "Which?", "choices": ["a", "b"]}`, ClarifyArgs{Question: "Which?", Choices: []string{"a", "b"}}, true},
		{`{"question": "Which?"}`, ClarifyArgs{Question: "Which?"}, true},
		{`{"Question": "Which?"}`, ClarifyArgs{}, false},
		{`{"question": "A?", "QUESTION": "B?"}`, ClarifyArgs{}, false},
		{`{"question": "A?", "choices": "a"}`, ClarifyArgs{}, false},
		{`{"question": ""}`, ClarifyArgs{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseClarify(tt.raw)
		if ok != tt.ok || got.Question != tt.want.Question || strings.Join(got.Choices, ",") != strings.Join(tt.want.Choices, ",") {
			t.Errorf("ParseClarify(%s) = %+v, %v; want %+v, %v", tt.raw, got, ok, tt.want, tt.ok)
		}
	}
}
