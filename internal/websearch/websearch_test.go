package websearch

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakesearch"
)

// backendConfig configures api against the fake at url.
func backendConfig(api, url, key string) config.WebSearch {
	switch api {
	case config.SearchSearXNG:
		return config.WebSearch{SearXNGURL: url}
	case config.SearchBrave:
		return config.WebSearch{BraveAPIKey: key, BaseURL: url}
	case config.SearchTavily:
		return config.WebSearch{TavilyAPIKey: key, BaseURL: url}
	}
	return config.WebSearch{ExaAPIKey: key, BaseURL: url}
}

// TestBackends: each backend sends its API's request and reads its
// answer into the same results; its failures are one line each.
func TestBackends(t *testing.T) {
	t.Parallel()
	hits := []fakesearch.Hit{
		{Title: "Go", URL: "https://go.dev/", Snippet: "The Go   programming\nlanguage"},
		{Title: "Tour", URL: "https://go.dev/tour", Snippet: "A tour of Go &amp; more"},
		{Title: "no address", URL: "", Snippet: "dropped"},
		{Title: "Spec", URL: "https://go.dev/ref/spec", Snippet: strings.Repeat("é", 400)},
	}
	fake := fakesearch.New("key-123", hits...)
	defer fake.Close()
	for _, api := range config.SearchBackends {
		t.Run(api, func(t *testing.T) {
			b, err := FromConfig(backendConfig(api, fake.URL(), "key-123"), nil)
			if err != nil || b.Name() != api {
				t.Fatalf("FromConfig: %v, %v", b, err)
			}
			got, err := b.Search(context.Background(), "golang docs", 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 || got[0] != (Result{Title: "Go", URL: "https://go.dev/", Snippet: "The Go programming language"}) || got[2].URL != "https://go.dev/ref/spec" {
				t.Fatalf("results: %+v", got)
			}
			if s := got[2].Snippet; len(s) > maxSnippet+len("…") || !strings.HasSuffix(s, "…") || !strings.HasPrefix(s, "éé") {
				t.Errorf("a long snippet is %d bytes: %q", len(s), s)
			}
			if api == config.SearchBrave && got[1].Snippet != "A tour of Go & more" {
				t.Errorf("Brave's marks and entities stay: %q", got[1].Snippet)
			}
			reqs := fake.Requests()
			if last := reqs[len(reqs)-1]; last.API != api || last.Query != "golang docs" {
				t.Errorf("the fake received %+v", last)
			}
			few, err := b.Search(context.Background(), "golang docs", 1)
			if err != nil || len(few) != 1 {
				t.Errorf("limit 1: %+v %v", few, err)
			}

			failures := []struct {
				f      fakesearch.Failure
				is     error
				errHas string
			}{
				{fakesearch.Failure{Status: 429, RetryAfter: "30"}, ErrRateLimited, "try again in 30 s"},
				{fakesearch.Failure{Status: 502, Body: "<html>bad gateway</html>"}, ErrService, "HTTP 502"},
				{fakesearch.Failure{Status: 200, Body: "<html>not json</html>"}, ErrService, "is not its JSON"},
			}
			for _, fc := range failures {
				fake.Fail(fc.f)
				_, err := b.Search(context.Background(), "q", 5)
				if !errors.Is(err, fc.is) || !strings.Contains(err.Error(), fc.errHas) || !strings.HasPrefix(err.Error(), api+":") || strings.Contains(err.Error(), "\n") {
					t.Errorf("status %d: %v, want %v with %q", fc.f.Status, err, fc.is, fc.errHas)
				}
			}
			if api != config.SearchSearXNG {
				wrong, _ := FromConfig(backendConfig(api, fake.URL(), "wrong"), nil)
				_, err := wrong.Search(context.Background(), "q", 5)
				if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), strings.ToUpper(api)+"_API_KEY") {
					t.Errorf("a wrong key: %v", err)
				}
			}
		})
	}
}

// TestSearXNGWithoutJSON: an instance that does not serve format=json
// (403) is told apart from a refused key.
func TestSearXNGWithoutJSON(t *testing.T) {
	t.Parallel()
	fake := fakesearch.New("")
	defer fake.Close()
	b, _ := FromConfig(config.WebSearch{SearXNGURL: fake.URL()}, nil)
	fake.Fail(fakesearch.Failure{Status: 403, Body: "Forbidden"})
	if _, err := b.Search(context.Background(), "q", 5); err == nil || !strings.Contains(err.Error(), "enable json under search.formats") {
		t.Errorf("403: %v", err)
	}
}

// TestFromConfig: the named backend, or the first configured; none says
// which keys to set.
func TestFromConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cfg     config.WebSearch
		want    string
		missing string
	}{
		{config.WebSearch{}, "", "set SEARXNG_URL (a SearXNG instance), BRAVE_API_KEY, TAVILY_API_KEY or EXA_API_KEY"},
		{config.WebSearch{ExaAPIKey: "e", TavilyAPIKey: "t"}, "tavily", ""},
		{config.WebSearch{ExaAPIKey: "e", SearXNGURL: "http://localhost:8888"}, "searxng", ""},
		{config.WebSearch{Backend: "exa", ExaAPIKey: "e", BraveAPIKey: "b"}, "exa", ""},
		{config.WebSearch{Backend: "brave", ExaAPIKey: "e"}, "", "set BRAVE_API_KEY"},
	}
	for _, c := range cases {
		b, err := FromConfig(c.cfg, nil)
		switch {
		case c.want != "" && (err != nil || b.Name() != c.want):
			t.Errorf("%+v: %v, %v; want %s", c.cfg, b, err, c.want)
		case c.want == "" && (!errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), c.missing)):
			t.Errorf("%+v: %v; want %q", c.cfg, err, c.missing)
		}
	}
}
