package fakellm

// Table tests of the pure functions of the Ollama format and of stream
// framing.

import (
	"encoding/json"
	"testing"
)

func TestFrame(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ev     sseEvent
		ndjson bool
		want   string
	}{
		{sseEvent{data: []byte(`{"a":1}`)}, false, "data: {\"a\":1}\n\n"},
		{sseEvent{name: "message_stop", data: []byte(`{}`)}, false, "event: message_stop\ndata: {}\n\n"},
		{sseEvent{data: []byte(`{"done":false}`)}, true, "{\"done\":false}\n"},
		{sseEvent{name: "ignored", data: []byte(`{}`)}, true, "{}\n"},
	}
	for _, tt := range tests {
		if got := string(frame(tt.ev, tt.ndjson)); got != tt.want {
			t.Errorf("frame(%+v, %v) = %q, want %q", tt.ev, tt.ndjson, got, tt.want)
		}
	}
}

func TestOllamaArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		object bool
		text   string
	}{
		{``, true, `{}`},
		{`null`, true, `{}`},
		{`{ "a" : 1 }`, true, `{"a":1}`},
		{`"{\"a\":1}"`, false, `"{\"a\":1}"`},
		{`[1]`, false, `[1]`},
		{`{"a":`, false, `{}`},
	}
	for _, tt := range tests {
		raw := json.RawMessage(tt.in)
		if got := isObjectOrNull(raw); got != tt.object {
			t.Errorf("isObjectOrNull(%s) = %v, want %v", tt.in, got, tt.object)
		}
		if got := argumentText(raw); got != tt.text {
			t.Errorf("argumentText(%s) = %s, want %s", tt.in, got, tt.text)
		}
	}
}

func TestOptionInt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
		err  bool
	}{
		{`256`, 256, false},
		{`256.0`, 256, false},
		{`-1`, -1, false},
		{`2.5`, 0, true},
		{`"many"`, 0, true},
		{`1e12`, 0, true},
	}
	for _, tt := range tests {
		got, err := optionInt(json.RawMessage(tt.in))
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("optionInt(%s) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestAnsweredCall(t *testing.T) {
	t.Parallel()
	pending := func() []pendingCall {
		return []pendingCall{{id: "a", name: "read"}, {id: "b", name: "read"}, {id: "c", name: "todo"}}
	}
	tests := []struct {
		name    string
		answers [][2]string // id, tool name
		want    []string
	}{
		{"by tool name and order", [][2]string{{"", "read"}, {"", "read"}, {"", "todo"}}, []string{"a", "b", "c"}},
		{"by id first", [][2]string{{"b", "read"}, {"", "read"}}, []string{"b", "a"}},
		{"an unknown id falls back to the name", [][2]string{{"zzz", "todo"}}, []string{"c"}},
		{"no name: the next unanswered", [][2]string{{"", ""}, {"", ""}}, []string{"a", "b"}},
		{"none left", [][2]string{{"", "todo"}, {"", "todo"}}, []string{"c", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pending()
			for i, a := range tt.answers {
				if got := answeredCall(p, a[0], a[1]); got != tt.want[i] {
					t.Fatalf("answer %d = %q, want %q", i, got, tt.want[i])
				}
			}
		})
	}
}

func TestDerivedCallID(t *testing.T) {
	t.Parallel()
	a := derivedCallID(2, 0, "read", `{"p":1}`)
	if a != derivedCallID(2, 0, "read", `{"p":1}`) {
		t.Fatal("the same call got two ids")
	}
	for _, other := range []string{derivedCallID(2, 1, "read", `{"p":1}`), derivedCallID(3, 0, "read", `{"p":1}`), derivedCallID(2, 0, "read", `{"p":2}`)} {
		if other == a {
			t.Fatalf("two calls share the id %s", a)
		}
	}
}
