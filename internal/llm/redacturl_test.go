package llm

import (
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestRedactURL: credentials in an endpoint URL are never shown.
func TestRedactURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"http://localhost:11434/v1", "http://localhost:11434/v1"},
		{"https://user:sk-secret@host/v1", "https://xxxxx@host/v1"},
		{"https://sk-secret@host/v1", "https://xxxxx@host/v1"},
		{"https://host/v1?api-key=sk-secret", "https://host/v1?api-key=xxxxx"},
		{"https://host/v1?api-version=2024&key=sk-secret", "https://host/v1?api-version=xxxxx&key=xxxxx"},
		{"https://host/v1?sk-secret", "https://host/v1?xxxxx"},
		{"https://host/v1#sk-secret", "https://host/v1"},
		{"http://[::1]:bad/sk-secret\x7f", "(a URL that does not parse)"},
	} {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestPingErrorIsRedacted: an unreachable endpoint whose URL holds a key is
// named without it.
func TestPingErrorIsRedacted(t *testing.T) {
	t.Parallel()
	err := Ping(t.Context(), Endpoint{BaseURL: "http://user:s3cret@127.0.0.1:1/v1?api-key=s3cret"})
	if err == nil {
		t.Fatal("no error from an unreachable endpoint")
	}
	if strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("error = %q", err)
	}
}

// TestCallErrorIsRedacted: a model call to an unreachable endpoint whose
// URL holds a key says so without the key, in every wire format.
func TestCallErrorIsRedacted(t *testing.T) {
	t.Parallel()
	for _, w := range Wires {
		e := Endpoint{Wire: w, BaseURL: "http://user:s3cret@127.0.0.1:1/v1?api-key=s3cret", Model: "m"}
		_, err := Call(t.Context(), e, request(), Options{})
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v", w, err)
		}
	}
}

// TestBaseURLQueryKept: a base URL's query (Azure's ?api-version=, a
// proxy's parameter) goes with every request of the SDK-based providers,
// and the path is still the format's own.
func TestBaseURLQueryKept(t *testing.T) {
	t.Parallel()
	for _, w := range []Wire{WireAnthropic, WireResponses} {
		srv := fakellm.New(fakellm.TextStep("ok"))
		e := Endpoint{Wire: w, BaseURL: srv.URL() + "?api-version=2025-04-01&tenant=a%20b", APIKey: "k", Model: "fake-model"}
		r, err := Call(t.Context(), e, request(), Options{})
		srv.Close()
		if err != nil || r.Content != "ok" {
			t.Fatalf("%s: %q, %v", w, r.Content, err)
		}
		req := srv.Requests()[0]
		if req.Query.Get("api-version") != "2025-04-01" || req.Query.Get("tenant") != "a b" {
			t.Errorf("%s: query sent %v", w, req.Query)
		}
	}
}
