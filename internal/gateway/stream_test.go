package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/gateway/format"
)

func TestStatusLine(t *testing.T) {
	for _, tt := range []struct {
		name, args, want string
	}{
		{"terminal", `{"command":"echo hi"}`, `⏳ terminal: echo hi`},
		{"terminal", `{"command":"ls\n  -la","timeout":5}`, `⏳ terminal: ls \-la`},
		{"read_file", `{"path":"a/b_c.go"}`, `⏳ read\_file: a\/b\_c\.go`},
		{"web", `{"zeta":"z","alpha":"a"}`, `⏳ web: a`},
		{"todo", `{}`, `⏳ todo`},
		{"todo", `{"n":3}`, `⏳ todo`},
		{"terminal", `{"command":"rm -rf *`, `⏳ terminal: \{\"command\"\:\"rm \-rf \*`},
		{"terminal", `{"command":"<b>x</b> & [y](z)"}`, `⏳ terminal: \<b\>x\<\/b\> \& \[y\]\(z\)`},
		{"", `{"command":"x"}`, `⏳ tool: x`},
		{"terminal", `{"command":"` + strings.Repeat("a", 100) + `"}`, `⏳ terminal: ` + strings.Repeat("a", statusArgsMax-1) + `…`},
	} {
		if got := statusLine(tt.name, tt.args); got != tt.want {
			t.Errorf("statusLine(%q, %q) = %q, want %q", tt.name, tt.args, got, tt.want)
		}
	}
}

// The status line is literal text in every flavour: the model's arguments
// never become markup.
func TestStatusLineRendersLiterally(t *testing.T) {
	for _, args := range []string{`{"command":"echo *bold* _it_ ` + "`code`" + ` <i>x</i> & ~s~"}`, `{"command":"# head\n1. item\n> quote"}`,
		`{"command":"[a](http://evil.example) ![i](x)"}`, `{"command":"\\*x\\* ||sp||"}`} {
		html := format.Render(statusLine("terminal", args), format.FlavourTelegramHTML)
		if strings.ContainsAny(strings.NewReplacer("&lt;", "", "&gt;", "", "&amp;", "", "&quot;", "").Replace(html), "<>") {
			t.Errorf("status of %s renders markup: %q", args, html)
		}
		plain := format.Plain(statusLine("terminal", args))
		if want := "⏳ terminal: " + argSummary(args); plain != want {
			t.Errorf("status of %s shows %q, want %q", args, plain, want)
		}
	}
}

func TestCompact(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"a  b\n\tc", 10, "a b c"},
		{"  lead and trail  ", 20, "lead and trail"},
		{"abcdef", 4, "abc…"},
		{"héllo wörld", 6, "héllo…"},
		{"bad \xff utf8", 20, "bad utf8"},
		{"ctl\x00\x1b[31m", 20, "ctl [31m"},
	} {
		if got := compact(tt.in, tt.max); got != tt.want {
			t.Errorf("compact(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestChatRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tt := range []struct {
		name  string
		takes []time.Duration // edits of chat "a", after t0
		chat  string
		at    time.Duration
		want  time.Duration
	}{
		{"first", nil, "a", 0, 0},
		{"right after", []time.Duration{0}, "a", 100 * time.Millisecond, editEvery},
		{"a second after", []time.Duration{0}, "a", editEvery, editEvery},
		{"long after", []time.Duration{0}, "a", 5 * time.Second, 5 * time.Second},
		{"the latest counts", []time.Duration{0, 700 * time.Millisecond}, "a", 800 * time.Millisecond, 1700 * time.Millisecond},
		{"another chat", []time.Duration{0}, "b", 100 * time.Millisecond, 100 * time.Millisecond},
	} {
		var r chatRate
		for _, d := range tt.takes {
			r.take("a", t0.Add(d))
		}
		if got := r.next(tt.chat, t0.Add(tt.at)).Sub(t0); got != tt.want {
			t.Errorf("%s: next = t0+%s, want t0+%s", tt.name, got, tt.want)
		}
	}
}

func TestDraftApply(t *testing.T) {
	type ev struct{ kind, data string }
	for _, tt := range []struct {
		name         string
		evs          []ev
		text, status string
	}{
		{"text", []ev{{events.KindDelta, "Hel"}, {events.KindDelta, "lo"}}, "Hello", ""},
		{"a tool runs", []ev{{events.KindDelta, "Let me look."}, {events.KindToolStart, `{"id":"1","name":"terminal","args":"{\"command\":\"ls\"}"}`}},
			"", "⏳ terminal: ls"},
		{"a tool ended", []ev{{events.KindToolStart, `{"id":"1","name":"terminal","args":"{}"}`}, {events.KindToolEnd, `{"id":"1","name":"terminal"}`},
			{events.KindDelta, "Done."}}, "Done.", ""},
		{"two tools", []ev{{events.KindToolStart, `{"id":"1","name":"a","args":"{}"}`}, {events.KindToolStart, `{"id":"2","name":"b","args":"{}"}`}},
			"", "⏳ b (+1 more)"},
		{"one of two ended", []ev{{events.KindToolStart, `{"id":"1","name":"a","args":"{}"}`}, {events.KindToolStart, `{"id":"2","name":"b","args":"{}"}`},
			{events.KindToolEnd, `{"id":"2","name":"b"}`}}, "", "⏳ a"},
		{"a retry notice", []ev{{events.KindDelta, "Half"}, {events.KindWait, "model busy; retrying in 2s"}}, "", `⏳ model busy; retrying in 2s`},
		{"text after a retry", []ev{{events.KindWait, "retrying"}, {events.KindDelta, "Whole"}}, "Whole", ""},
		{"others ignored", []ev{{events.KindDelta, "x"}, {events.KindReasoning, "hmm"}, {events.KindStatus, "running"}}, "x", ""},
		{"bad JSON ignored", []ev{{events.KindDelta, "x"}, {events.KindToolStart, "{"}}, "x", ""},
		{"a task runs", []ev{{events.KindTaskStart, `{"session":"s.task1-1-1","goal":"count files"}`}}, "", "⏳ task: count files"},
		{"a task ended", []ev{{events.KindTaskStart, `{"session":"s.task1-1-1","goal":"a"}`}, {events.KindTaskStart, `{"session":"s.task1-1-2","goal":"b"}`},
			{events.KindTaskEnd, `{"session":"s.task1-1-2","goal":"b","stop_reason":"text_response"}`}}, "", "⏳ task: a"},
	} {
		var d draft
		for _, e := range tt.evs {
			d.apply(e.kind, e.data)
		}
		if d.text != tt.text || format.Plain(d.status()) != tt.status {
			t.Errorf("%s: text %q status %q, want %q %q", tt.name, d.text, format.Plain(d.status()), tt.text, tt.status)
		}
	}
}

// htmlParts is a Platform that only renders, as Telegram does.
type htmlParts struct{ Platform }

func (htmlParts) Parts(text string) []string {
	out := format.Split(text, format.TelegramLimit, format.FlavourTelegramHTML)
	if len(out) == 0 {
		return []string{"(no answer)"}
	}
	return out
}

func TestDraftRender(t *testing.T) {
	long := strings.Repeat("word ", 2000)
	for _, tt := range []struct {
		name string
		d    draft
		want func(string) bool
	}{
		{"nothing", draft{}, func(s string) bool { return s == "" }},
		{"blank text", draft{text: " \n"}, func(s string) bool { return s == "" }},
		{"text", draft{text: "**hi**"}, func(s string) bool { return s == "<b>hi</b>" }},
		{"status only", draft{tools: []runningTool{{id: "1", name: "terminal", args: `{"command":"a<b"}`}}},
			func(s string) bool { return s == "⏳ terminal: a&lt;b" }},
		{"text and status", draft{text: "Before ```go\nunclosed", tools: []runningTool{{id: "1", name: "t", args: "{}"}}},
			func(s string) bool { return strings.HasSuffix(s, "\n\n⏳ t") && strings.Count(s, "⏳") == 1 }},
		{"long text", draft{text: long}, func(s string) bool { return len([]rune(s)) <= format.TelegramLimit && len(s) > 3000 }},
		{"long text and status", draft{text: long, tools: []runningTool{{id: "1", name: "t", args: "{}"}}},
			func(s string) bool {
				return len([]rune(s)) <= format.TelegramLimit && strings.HasSuffix(s, "…\n\n⏳ t")
			}},
	} {
		if got := tt.d.render(htmlParts{}); !tt.want(got) {
			t.Errorf("%s: render = %q", tt.name, got)
		}
	}
}

func TestDraftKey(t *testing.T) {
	if got := draftKey("telegram", "7", "turn/s/1", 0); got != "telegram/7/turn/s/1/draft" {
		t.Errorf("draftKey gen 0 = %q", got)
	}
	if got := draftKey("telegram", "7", "turn/s/1", 2); got != "telegram/7/turn/s/1/draft/2" {
		t.Errorf("draftKey gen 2 = %q", got)
	}
}
