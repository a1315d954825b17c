package websearch

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/talaria-agent/talaria/config"
)

// Result is one search hit.
type Result struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// Backend searches the web.
type Backend interface {
	// Name is the service's name (searxng, brave, tavily, exa).
	Name() string
	// Search returns at most limit results for query, best first.
	Search(ctx context.Context, query string, limit int) ([]Result, error)
}

// Sentinel errors; a backend's errors wrap one of them.
var (
	// ErrNotConfigured: no backend has what it needs.
	ErrNotConfigured = errors.New("web search is not configured")
	// ErrAuth: the service refused the key.
	ErrAuth = errors.New("key refused")
	// ErrRateLimited: the service asks to slow down.
	ErrRateLimited = errors.New("rate limited")
	// ErrService: the service failed or answered what it should not.
	ErrService = errors.New("search service failed")
)

// Limits of one search.
const (
	searchTimeout = 20 * time.Second
	maxAnswer     = 4 << 20
	maxSnippet    = 500
)

// Default API addresses.
const (
	braveURL  = "https://api.search.brave.com"
	tavilyURL = "https://api.tavily.com"
	exaURL    = "https://api.exa.ai"
)

// FromConfig is the backend the configuration chooses (config.WebSearch.Chosen);
// an error matching ErrNotConfigured names the keys to set when none is.
// client nil: a client with the search deadline.
func FromConfig(c config.WebSearch, client *http.Client) (Backend, error) {
	client = cmp.Or(client, &http.Client{Timeout: searchTimeout})
	base := func(def string) string {
		if c.BaseURL != "" {
			return c.BaseURL
		}
		return def
	}
	h := httpAPI{client: client}
	switch c.Chosen() {
	case config.SearchSearXNG:
		h.name, h.base = config.SearchSearXNG, c.SearXNGURL
		if c.BaseURL != "" {
			h.base = c.BaseURL
		}
		return SearXNG{h}, nil
	case config.SearchBrave:
		h.name, h.base, h.key, h.keyName = config.SearchBrave, base(braveURL), c.BraveAPIKey, "BRAVE_API_KEY"
		return Brave{h}, nil
	case config.SearchTavily:
		h.name, h.base, h.key, h.keyName = config.SearchTavily, base(tavilyURL), c.TavilyAPIKey, "TAVILY_API_KEY"
		return Tavily{h}, nil
	case config.SearchExa:
		h.name, h.base, h.key, h.keyName = config.SearchExa, base(exaURL), c.ExaAPIKey, "EXA_API_KEY"
		return Exa{h}, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrNotConfigured, c.Missing())
}

// httpAPI is what the backends share: the service's address and key, and
// one JSON exchange with it.
type httpAPI struct {
	client       *http.Client
	name, base   string
	key, keyName string
}

// Name implements Backend.
func (h httpAPI) Name() string { return h.name }

// exchange sends a request (body nil: GET) to path under the base with
// headers and decodes the JSON answer into out.
func (h httpAPI) exchange(ctx context.Context, path string, headers map[string]string, body any, out any) error {
	method := http.MethodGet
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s: encode the request: %w", h.name, err)
		}
		method, reader = http.MethodPost, bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(h.base, "/")+path, reader)
	if err != nil {
		return fmt.Errorf("%s: %w: %v", h.name, ErrService, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", h.name, ctx.Err())
		}
		return fmt.Errorf("%s: %w: %v", h.name, ErrService, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return fmt.Errorf("%s: %w: reading the answer: %v", h.name, ErrService, err)
	}
	if err := h.status(resp, data); err != nil {
		return err
	}
	if len(data) > maxAnswer {
		return fmt.Errorf("%s: %w: the answer is larger than %d bytes", h.name, ErrService, maxAnswer)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s: %w: the answer is not its JSON (%s): %v", h.name, ErrService, resp.Header.Get("Content-Type"), err)
	}
	return nil
}

// status turns a failed answer into its one-line error.
func (h httpAPI) status(resp *http.Response, body []byte) error {
	code := resp.StatusCode
	if code >= 200 && code < 300 {
		return nil
	}
	detail := strings.Join(strings.Fields(string(body[:min(len(body), 200)])), " ")
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden && h.keyName != "":
		return fmt.Errorf("%s: %w (%d): check %s", h.name, ErrAuth, code, h.keyName)
	case code == http.StatusForbidden:
		return fmt.Errorf("%s: %w: the instance refused format=json (403); enable json under search.formats in its settings.yml", h.name, ErrService)
	case code == http.StatusTooManyRequests:
		wait := "later"
		if s := resp.Header.Get("Retry-After"); s != "" {
			if n, err := strconv.Atoi(s); err == nil {
				wait = fmt.Sprintf("in %d s", n)
			} else if t, err := http.ParseTime(s); err == nil {
				wait = fmt.Sprintf("in %d s", max(0, int(time.Until(t).Seconds())))
			}
		}
		return fmt.Errorf("%s: %w (429); try again %s", h.name, ErrRateLimited, wait)
	}
	return fmt.Errorf("%s: %w: HTTP %d: %s", h.name, ErrService, code, detail)
}

// clip bounds a snippet and folds its whitespace.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxSnippet {
		return s
	}
	cut := maxSnippet
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// keep drops results without an address and bounds the rest to limit.
func keep(rs []Result, limit int) []Result {
	out := make([]Result, 0, min(len(rs), limit))
	for _, r := range rs {
		if r.URL == "" {
			continue
		}
		r.Title, r.Snippet = strings.TrimSpace(r.Title), clip(r.Snippet)
		out = append(out, r)
		if len(out) == limit {
			break
		}
	}
	return out
}
