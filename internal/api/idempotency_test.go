package api

import (
	"strings"
	"testing"
)

func TestParseIdempotencyKey(t *testing.T) {
	for _, tt := range []struct {
		name   string
		values []string
		want   string
		bad    string // what the 400's message says
	}{
		{"none", nil, "", ""},
		{"bare", []string{"8e03978e-40d5-43e8-bc93-6894a57f9324"}, "8e03978e-40d5-43e8-bc93-6894a57f9324", ""},
		{"quoted, as the draft writes it", []string{`"8e03978e-40d5"`}, "8e03978e-40d5", ""},
		{"quoted with escapes", []string{`"a\"b\\c"`}, `a"b\c`, ""},
		{"spaces inside", []string{"order 17 retry"}, "order 17 retry", ""},
		{"255 characters", []string{strings.Repeat("k", 255)}, strings.Repeat("k", 255), ""},
		{"empty", []string{""}, "", "is empty"},
		{"empty quoted", []string{`""`}, "", "is empty"},
		{"blank", []string{"   "}, "", "is empty"},
		{"256 characters", []string{strings.Repeat("k", 256)}, "", "is 256 characters long"},
		{"not ASCII", []string{"clé"}, "", "not printable ASCII"},
		{"a control character", []string{"a\tb"}, "", "not printable ASCII"},
		{"a bare quote inside", []string{`"a"b"`}, "", "bare quote"},
		{"a stray backslash", []string{`"a\b"`}, "", "stray backslash"},
		{"twice", []string{"a", "b"}, "", "sent 2 times"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseIdempotencyKey(tt.values)
			if tt.bad == "" {
				if err != nil || got != tt.want {
					t.Fatalf("got %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			wantParam(t, err, IdempotencyHeader)
			if !strings.Contains(err.Error(), tt.bad) {
				t.Fatalf("error %q does not say %q", err, tt.bad)
			}
		})
	}
}

func TestDeriveKeyed(t *testing.T) {
	a := deriveKeyed([]byte("secret-1"), keyedRuns, "", "k1")
	if again := deriveKeyed([]byte("secret-1"), keyedRuns, "", "k1"); *again != *a {
		t.Fatalf("not deterministic: %+v, %+v", a, again)
	}
	if !validSession(a.session) || len(a.requestID) > 128 || !strings.HasPrefix(a.requestID, "api/idempotency/") {
		t.Fatalf("derived %+v: the session must be valid, the request id short enough to be kept whole", a)
	}
	if strings.Contains(a.session+a.requestID, "k1") {
		t.Fatalf("derived %+v shows the key", a)
	}
	seen := map[string]string{a.session: "base"}
	for name, other := range map[string]*keyed{
		"another API key": deriveKeyed([]byte("secret-2"), keyedRuns, "", "k1"),
		"another route":   deriveKeyed([]byte("secret-1"), keyedChat, "", "k1"),
		"a session named": deriveKeyed([]byte("secret-1"), keyedRuns, "s1", "k1"),
		"another key":     deriveKeyed([]byte("secret-1"), keyedRuns, "", "k2"),
	} {
		if prev, ok := seen[other.session]; ok {
			t.Errorf("%s derives the session of %s", name, prev)
		}
		seen[other.session] = name
		if other.requestID == a.requestID {
			t.Errorf("%s derives the same request id", name)
		}
	}
}

func TestAskMatches(t *testing.T) {
	rec := ask{Input: "do it", Model: "", MaxIterations: 90, Tools: []string{"terminal", "read_file"}}
	bg := ask{Input: "do it", Background: true, Deliver: []string{"local"}, MaxIterations: 90}
	for _, tt := range []struct {
		name      string
		want, rec ask
		same      bool
	}{
		{"the same input, nothing else stated", ask{Input: "do it"}, rec, true},
		{"the budget stated and the same", ask{Input: "do it", MaxIterations: 90}, rec, true},
		{"the tools stated, in another order", ask{Input: "do it", Tools: []string{"read_file", "terminal"}}, rec, true},
		{"another input", ask{Input: "do something else"}, rec, false},
		{"another model", ask{Input: "do it", Model: "other-model"}, rec, false},
		{"another budget", ask{Input: "do it", MaxIterations: 5}, rec, false},
		{"other tools", ask{Input: "do it", Tools: []string{"terminal"}}, rec, false},
		{"a background run for a foreground one", ask{Input: "do it", Background: true, Deliver: []string{"local"}}, rec, false},
		{"a foreground run for a background one", ask{Input: "do it"}, bg, false},
		{"the same background run", ask{Input: "do it", Background: true, Deliver: []string{"local"}}, bg, true},
		{"another delivery", ask{Input: "do it", Background: true, Deliver: []string{"home"}}, bg, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.want.matches(tt.rec); got != tt.same {
				t.Fatalf("matches = %v, want %v", got, tt.same)
			}
		})
	}
}
