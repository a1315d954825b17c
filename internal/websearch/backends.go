package websearch

import (
	"cmp"
	"context"
	"html"
	"net/url"
	"strconv"
	"strings"
)

// SearXNG searches through a SearXNG instance's JSON API:
// GET /search?q=...&format=json.
type SearXNG struct{ httpAPI }

// Search implements Backend.
func (s SearXNG) Search(ctx context.Context, query string, limit int) ([]Result, error) {
	var ans contentAnswer
	q := url.Values{"q": {query}, "format": {"json"}}
	if err := s.exchange(ctx, "/search?"+q.Encode(), nil, nil, &ans); err != nil {
		return nil, err
	}
	return ans.results(limit), nil
}

// contentAnswer is the answer SearXNG and Tavily share: results with a
// title, an address and the matching content.
type contentAnswer struct {
	Results []struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
	} `json:"results"`
}

// results are the answer's results, at most limit.
func (a contentAnswer) results(limit int) []Result {
	out := make([]Result, 0, len(a.Results))
	for _, r := range a.Results {
		out = append(out, Result{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return keep(out, limit)
}

// Brave searches with the Brave Search API: GET /res/v1/web/search with
// the key in X-Subscription-Token.
type Brave struct{ httpAPI }

// Search implements Backend.
func (b Brave) Search(ctx context.Context, query string, limit int) ([]Result, error) {
	var ans struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	q := url.Values{"q": {query}, "count": {strconv.Itoa(min(limit, 20))}}
	if err := b.exchange(ctx, "/res/v1/web/search?"+q.Encode(), map[string]string{"X-Subscription-Token": b.key}, nil, &ans); err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(ans.Web.Results))
	for _, r := range ans.Web.Results {
		out = append(out, Result{Title: r.Title, URL: r.URL, Snippet: stripTags(r.Description)})
	}
	return keep(out, limit), nil
}

// Tavily searches with the Tavily API: POST /search with a bearer key.
type Tavily struct{ httpAPI }

// Search implements Backend.
func (t Tavily) Search(ctx context.Context, query string, limit int) ([]Result, error) {
	var ans contentAnswer
	body := map[string]any{"query": query, "max_results": min(limit, 20)}
	if err := t.exchange(ctx, "/search", map[string]string{"Authorization": "Bearer " + t.key}, body, &ans); err != nil {
		return nil, err
	}
	return ans.results(limit), nil
}

// Exa searches with the Exa API: POST /search with the key in x-api-key,
// asking for highlights as snippets.
type Exa struct{ httpAPI }

// Search implements Backend.
func (e Exa) Search(ctx context.Context, query string, limit int) ([]Result, error) {
	var ans struct {
		Results []struct {
			Title      string   `json:"title"`
			URL        string   `json:"url"`
			Text       string   `json:"text"`
			Highlights []string `json:"highlights"`
		} `json:"results"`
	}
	body := map[string]any{"query": query, "numResults": min(limit, 20), "type": "auto",
		"contents": map[string]any{"highlights": map[string]any{"numSentences": 2}}}
	if err := e.exchange(ctx, "/search", map[string]string{"x-api-key": e.key}, body, &ans); err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(ans.Results))
	for _, r := range ans.Results {
		snippet := cmp.Or(strings.Join(r.Highlights, " … "), r.Text)
		out = append(out, Result{Title: r.Title, URL: r.URL, Snippet: snippet})
	}
	return keep(out, limit), nil
}

// stripTags removes the <strong> marks Brave puts around matched words and
// decodes its entities.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return html.UnescapeString(b.String())
}
