package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/workflows"
)

func TestArgsSummary(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"a command", `{"command":"make test","timeout":60}`, "make test"},
		{"a path", `{"path":"src/main.go"}`, "src/main.go"},
		{"no arguments", `{}`, ""},
		{"other arguments", `{"n":3}`, `{"n":3}`},
		{"clipped JSON", `{"command":"echo hi`, `{"command":"echo hi`},
		{"an escape sequence is made visible", `{"command":"echo \u001b[2J; rm x"}`, `echo \x1b[2J; rm x`},
		{"a newline stays on the line", `{"command":"a\nb"}`, `a\nb`},
		{"long", `{"command":"` + strings.Repeat("x", 500) + `"}`, strings.Repeat("x", shownArgs) + "…"},
	}
	for _, tt := range tests {
		if got := argsSummary(tt.args); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestCurrentLine: the step running now on one line, with its attempt
// (not for a tool's first), its tool and arguments; nothing when a wait
// already shows it.
func TestCurrentLine(t *testing.T) {
	tool := engine.CurrentWork{What: "tool", Tool: "terminal", Args: `{"command":"make test"}`, Attempt: 1, MaxAttempts: 6, RunningFor: "3m10s"}
	tests := []struct {
		name  string
		c     *engine.CurrentWork
		waits []engine.ActivityWait
		want  string
	}{
		{"a model call", &engine.CurrentWork{What: "model call", Attempt: 1, MaxAttempts: 6, RunningFor: "12s"}, nil, "  model call: attempt 1 of 6, running 12s"},
		{"a tool", &tool, nil, "  tool: terminal `make test`, running 3m10s"},
		{"a tool without arguments", &engine.CurrentWork{What: "tool", Tool: "read_file", RunningFor: "2s"}, nil, "  tool: read_file, running 2s"},
		{"a tool's second attempt", &engine.CurrentWork{What: "tool", Tool: "x", Attempt: 2, MaxAttempts: 3, RunningFor: "1s"}, nil, "  tool: x, attempt 2 of 3, running 1s"},
		{"a compaction", &engine.CurrentWork{What: "compaction", Attempt: 1, MaxAttempts: 6, RunningFor: "1s"}, nil, "  compaction: attempt 1 of 6, running 1s"},
		{"nothing", nil, nil, ""},
		{"a slow call is already a wait", &engine.CurrentWork{What: "model call", Attempt: 1, RunningFor: "1m0s"},
			[]engine.ActivityWait{{What: "model call", Attempt: 1, RunningFor: time.Minute}}, ""},
	}
	for _, tt := range tests {
		if got := currentLine(tt.c, tt.waits); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPrintStatus(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	next := now.Add(3 * time.Second)
	base := workflows.Progress{TurnID: "s1-turn-2", Iteration: 2, BudgetLeft: 88, APICalls: 3}
	with := func(f func(p *workflows.Progress)) *workflows.Progress {
		p := base
		f(&p)
		return &p
	}
	tests := []struct {
		name string
		r    engine.Status
		want []string
		not  []string
	}{
		{"idle with a queue", engine.Status{Session: workflows.SessionState{Queued: []string{"first\nline", "second"}}},
			[]string{"session s1: idle\n", "  queued 1: first\\nline\n", "  queued 2: second\n"}, nil},
		{"an approval", engine.Status{Turn: with(func(p *workflows.Progress) {
			p.PendingApproval = &workflows.PendingApproval{Command: "rm -rf build\x1b[2J", Reason: "recursive delete"}
		})}, []string{"session s1: running s1-turn-2 — iteration 2, 88 left, 3 model calls\n",
			"  approval needed: rm -rf build\\x1b[2J\n", "    reason:  recursive delete\n",
			"    approve: talaria approve s1 ", "    deny:    talaria deny s1\n"}, []string{"question"}},
		{"a question", engine.Status{Turn: with(func(p *workflows.Progress) {
			p.PendingQuestion = &workflows.PendingQuestion{Question: "Which colour?", Choices: []string{"red", "blue"}}
		})}, []string{"  question: Which colour?\n", "    1. red\n", "    2. blue\n", "    answer:  talaria answer s1 \"YOUR ANSWER\"\n"},
			[]string{"approve"}},
		{"steers", engine.Status{Turn: with(func(p *workflows.Progress) {
			p.PendingSteers, p.Steers = 2, []string{"be brief\nplease", "and polite"}
		})}, []string{"  steers pending: 2 — next: \"be brief\\nplease\" (delivered at the turn's next safe point)\n"}, nil},
		{"a retry between attempts hides the notice it repeats", engine.Status{Turn: &base,
			Waits:      []engine.ActivityWait{{What: "model call", Attempt: 2, MaxAttempts: 6, NextAttempt: &next, LastFailure: "model call failed (server_error, HTTP 500): boom"}},
			LastNotice: &engine.TurnNotice{Text: "model call failed (server_error, HTTP 500): boom; next attempt (2 of 6) in 4s", At: now.Add(-time.Second)}},
			[]string{"  waiting: model call attempt 2 of 6 in 3s — last failure: model call failed (server_error, HTTP 500): boom\n"},
			[]string{"last notice"}},
		{"the last notice after a retry", engine.Status{Turn: &base,
			Current:    &engine.CurrentWork{What: "model call", Attempt: 2, MaxAttempts: 6, RunningFor: "1s"},
			LastNotice: &engine.TurnNotice{Text: "model call failed (server_error, HTTP 500): boom; next attempt (2 of 6) in 4s", At: now.Add(-5 * time.Second)}},
			[]string{"  model call: attempt 2 of 6, running 1s\n", "  last notice, 5s ago: model call failed (server_error, HTTP 500): boom; next attempt (2 of 6) in 4s\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			printStatus(&out, "s1", tt.r, now)
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("lacks %q", w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("has %q", n)
				}
			}
			if t.Failed() {
				t.Logf("printed:\n%s", out.String())
			}
		})
	}
}

// TestStatusJSONKeys: every key of status's JSON is snake_case.
func TestStatusJSONKeys(t *testing.T) {
	now := time.Now()
	r := engine.Status{
		Session: workflows.SessionState{SessionID: "s", Running: "t", Queued: []string{"q"}, Assigned: map[string]string{"req-1": "t"}},
		Turn: &workflows.Progress{TurnID: "t", CurrentTool: "terminal", PendingSteers: 1, Steers: []string{"x"}, Recent: []string{"r"},
			PendingApproval: &workflows.PendingApproval{CallID: "c", Command: "rm"}, PendingQuestion: &workflows.PendingQuestion{Question: "?", Choices: []string{"a"}}},
		Waits:      []engine.ActivityWait{{What: "model call", Attempt: 2, MaxAttempts: 6, NextAttempt: &now, RunningFor: time.Second, LastFailure: "x"}},
		Current:    &engine.CurrentWork{What: "tool", Tool: "terminal", Args: "{}", Attempt: 1, MaxAttempts: 3, StartedAt: now, RunningFor: "1s"},
		LastNotice: &engine.TurnNotice{Text: "x", At: now},
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if bad := nonSnakeKeys(v, "", map[string]bool{"session.assigned": true}); len(bad) > 0 {
		t.Fatalf("keys not snake_case: %v\n%s", bad, data)
	}
}

// nonSnakeKeys lists the object keys in v that are not snake_case, skipping
// the values of maps keyed by data (skip, by path).
func nonSnakeKeys(v any, path string, skip map[string]bool) []string {
	var bad []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := strings.TrimPrefix(path+"."+k, ".")
			if strings.ToLower(k) != k || strings.ContainsAny(k, " -") {
				bad = append(bad, p)
			}
			if !skip[p] {
				bad = append(bad, nonSnakeKeys(e, p, skip)...)
			}
		}
	case []any:
		for _, e := range x {
			bad = append(bad, nonSnakeKeys(e, path, skip)...)
		}
	}
	return bad
}
