package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakesearch"
	"github.com/talaria-agent/talaria/internal/websearch"
)

// TestWebSearchTool: results as title/url/snippet with the limit kept;
// bad arguments, a service failure and a missing backend are one-line
// errors, the last naming the keys to set.
func TestWebSearchTool(t *testing.T) {
	fake := fakesearch.New("k", fakesearch.Hit{Title: "A", URL: "https://a.example/", Snippet: "first"},
		fakesearch.Hit{Title: "B", URL: "https://b.example/", Snippet: "second"})
	defer fake.Close()
	backend, err := websearch.FromConfig(config.WebSearch{TavilyAPIKey: "k", BaseURL: fake.URL()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tool := WebSearchTool{Backend: backend}.Tool()
	out, err := runTool(t, tool, Env{}, `{"query":"  agents  ","limit":1}`)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Query, Backend string
		Results        []websearch.Result
	}
	if json.Unmarshal([]byte(out), &res) != nil || res.Query != "agents" || res.Backend != "tavily" || len(res.Results) != 1 ||
		res.Results[0] != (websearch.Result{Title: "A", URL: "https://a.example/", Snippet: "first"}) {
		t.Errorf("result: %s", out)
	}
	if reqs := fake.Requests(); len(reqs) != 1 || reqs[0].Limit != 1 {
		t.Errorf("requests: %+v", reqs)
	}
	for _, c := range []struct{ args, errHas string }{
		{`{"query":""}`, `"query" must not be empty`},
		{`{}`, `"query"`},
		{`{"query":"x","limit":"many"}`, `"limit"`},
	} {
		if _, err := runTool(t, tool, Env{}, c.args); err == nil || !strings.Contains(err.Error(), c.errHas) {
			t.Errorf("%s: %v, want %q", c.args, err, c.errHas)
		}
	}
	fake.Fail(fakesearch.Failure{Status: 429, RetryAfter: "12"})
	if _, err := runTool(t, tool, Env{}, `{"query":"x"}`); err == nil || err.Error() != "web_search: tavily: rate limited (429); try again in 12 s" {
		t.Errorf("rate limited: %v", err)
	}
	missing := WebSearchTool{Missing: config.WebSearch{}.Missing()}.Tool()
	if _, err := missing.Run(context.Background(), Env{}, json.RawMessage(`{"query":"x"}`)); err == nil ||
		!strings.Contains(err.Error(), "SEARXNG_URL") || !strings.Contains(err.Error(), "BRAVE_API_KEY") {
		t.Errorf("no backend: %v", err)
	}
}
