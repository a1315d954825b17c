package tools

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestEscLenNeverUnderestimates: the escaped length used to cut text
// before encoding is at least what encoding/json produces.
func TestEscLenNeverUnderestimates(t *testing.T) {
	var all strings.Builder
	for r := rune(0); r < 0x3000; r++ {
		all.WriteRune(r)
	}
	for _, s := range []string{"", "plain", "\x00\x01\x1f", "\"\\\n\r\t\b\f", "<>&", "\u2028\u2029", "\xff\xfe", "é漢🙂", all.String()} {
		enc, _ := json.Marshal(s)
		if got, want := escLen(s), utf8.RuneCount(enc)-2; got < want {
			t.Errorf("%q: escLen %d, encoded %d", s, got, want)
		}
	}
}

func TestCapMiddleJSON(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		budget int
		want   string
	}{
		{"fits", "abc", 10, "abc"},
		{"plain cut", "0123456789", 4, "01" + omittedMarker(6) + "89"},
		{"control bytes count six", strings.Repeat("\x01", 10), 12, "\x01" + omittedMarker(8) + "\x01"},
		{"quotes count two", strings.Repeat(`"`, 10), 4, `"` + omittedMarker(8) + `"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := capMiddleJSON(c.in, c.budget, "", jsonRuneLen); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestBoundJSONKeepsShape: cutting a document keeps its keys, order and
// validity; a document whose size is not in strings is not bounded.
func TestBoundJSONKeepsShape(t *testing.T) {
	doc := `{"z":"` + strings.Repeat("q", 5000) + `", "a" : [1, "` + strings.Repeat("\\u0001", 3000) + `"], "m": "short"}`
	out, ok := boundJSON(doc, 1000, "[kept in F]")
	if !ok || !json.Valid([]byte(out)) {
		t.Fatalf("ok %v, valid %v:\n%s", ok, json.Valid([]byte(out)), out)
	}
	if n := utf8.RuneCountInString(out); n > 1000+markerAllowance {
		t.Fatalf("%d characters", n)
	}
	if !strings.HasPrefix(out, `{"z":"qqq`) || !strings.HasSuffix(out, `"m": "short"}`) || !strings.Contains(out, "[kept in F]") || !strings.Contains(out, `"a" : [1, "`) {
		t.Fatalf("shape lost:\n%s", out)
	}
	if _, ok := boundJSON(mustJSON(t, make([]int, 10_000)), 1000, ""); ok {
		t.Fatal("an array of numbers was bounded by cutting strings")
	}
	if _, ok := boundJSON(`{"a":`, 1000, ""); ok {
		t.Fatal("invalid JSON was bounded")
	}
}
