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

func TestArgsParsing(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		field   string
		kind    string // str, id, int, bool
		want    any
		present bool
		errHas  string
	}{
		{name: "string", raw: `{"a":"x"}`, field: "a", kind: "str", want: "x", present: true},
		{name: "string absent", raw: `{}`, field: "a", kind: "str", want: "", present: false},
		{name: "string null is absent", raw: `{"a":null}`, field: "a", kind: "str", want: "", present: false},
		{name: "string given a number", raw: `{"a":1}`, field: "a", kind: "str", errHas: "must be a string, got a number"},
		{name: "id given a number", raw: `{"a":12}`, field: "a", kind: "id", want: "12", present: true},
		{name: "id given a bool", raw: `{"a":true}`, field: "a", kind: "id", errHas: "must be a string, got a boolean"},
		{name: "int", raw: `{"n":42}`, field: "n", kind: "int", want: 42, present: true},
		{name: "int as float", raw: `{"n":3.0}`, field: "n", kind: "int", want: 3, present: true},
		{name: "int as exponent", raw: `{"n":1e3}`, field: "n", kind: "int", want: 1000, present: true},
		{name: "int as string", raw: `{"n":" 7 "}`, field: "n", kind: "int", want: 7, present: true},
		{name: "int fractional", raw: `{"n":2.5}`, field: "n", kind: "int", errHas: "whole number"},
		{name: "int huge", raw: `{"n":1e300}`, field: "n", kind: "int", errHas: "out of range"},
		{name: "int object", raw: `{"n":{}}`, field: "n", kind: "int", errHas: "got an object"},
		{name: "bool", raw: `{"b":true}`, field: "b", kind: "bool", want: true, present: true},
		{name: "bool string", raw: `{"b":"False"}`, field: "b", kind: "bool", want: false, present: true},
		{name: "bool number", raw: `{"b":1}`, field: "b", kind: "bool", errHas: "must be a boolean"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := parseArgs("t", []byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			var got any
			var present bool
			switch tc.kind {
			case "str":
				got, present, err = a.str(tc.field)
			case "id":
				got, present, err = a.idStr(tc.field)
			case "int":
				got, present, err = a.integer(tc.field)
			case "bool":
				got, present, err = a.boolean(tc.field)
			}
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || present != tc.present {
				t.Errorf("got %v (present %v), want %v (present %v)", got, present, tc.want, tc.present)
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
