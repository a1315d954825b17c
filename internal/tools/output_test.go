package tools

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHeadTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		chunks []string
		want   string
	}{
		{name: "fits", limit: 10, chunks: []string{"abc", "def"}, want: "abcdef"},
		{name: "exactly the limit", limit: 6, chunks: []string{"abcdef"}, want: "abcdef"},
		{name: "one big write", limit: 6, chunks: []string{"abcdefghij"}, want: "abc" + omittedMarker(4) + "hij"},
		{name: "many small writes", limit: 6, chunks: strings.Split("abcdefghij", ""), want: "abc" + omittedMarker(4) + "hij"},
		{name: "tail compaction over many writes", limit: 4, chunks: []string{"ab", "cd", "ef", "gh", "ij", "kl", "mn"}, want: "ab" + omittedMarker(10) + "mn"},
		{name: "odd limit", limit: 5, chunks: []string{"0123456789"}, want: "01" + omittedMarker(5) + "789"},
		// "é" is two bytes: a cut inside a character drops it whole and
		// counts it as omitted.
		{name: "multibyte cut at character boundaries", limit: 6, chunks: []string{"ééééé"}, want: "é" + omittedMarker(3) + "é"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newHeadTailBuffer(tc.limit)
			for _, c := range tc.chunks {
				if n, err := b.Write([]byte(c)); n != len(c) || err != nil {
					t.Fatalf("write returned %d, %v", n, err)
				}
			}
			got := b.String()
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Error("output is not valid UTF-8")
			}
		})
	}
}

func TestCapMiddle(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{name: "short", in: "hello", max: 10, want: "hello"},
		{name: "no cap", in: "hello", max: 0, want: "hello"},
		{name: "cut", in: "0123456789", max: 4, want: "01" + omittedMarker(6) + "89"},
		{name: "runes", in: "ééééééé", max: 4, want: "éé" + omittedMarker(3) + "éé"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := capMiddle(tc.in, tc.max); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseArgsRejects(t *testing.T) {
	for _, raw := range []string{`[1]`, `"s"`, `12`, `true`, `{"a":`, `{]`} {
		if _, err := parseArgs("t", []byte(raw)); err == nil {
			t.Errorf("%s: no error", raw)
		}
	}
	for _, raw := range []string{``, `  `, `null`, `{}`} {
		if _, err := parseArgs("t", []byte(raw)); err != nil {
			t.Errorf("%q: %v", raw, err)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		in    string
		state byte
		pgrp  int
		ok    bool
	}{
		{in: "123 (bash) S 1 123 123 0 -1", state: 'S', pgrp: 123, ok: true},
		{in: "9 (weird) name (x)) Z 1 77 77", state: 'Z', pgrp: 77, ok: true},
		{in: "garbage", ok: false},
		{in: "1 (x) S 1", ok: false},
	}
	for _, tc := range tests {
		state, pgrp, ok := parseProcStat([]byte(tc.in))
		if state != tc.state || pgrp != tc.pgrp || ok != tc.ok {
			t.Errorf("%q: got %c %d %v", tc.in, state, pgrp, ok)
		}
	}
}
