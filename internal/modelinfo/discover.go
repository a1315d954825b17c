package modelinfo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/talaria-agent/talaria/internal/llm"
)

// Discovery defaults.
const (
	// DefaultDiscoveryTimeout bounds one discovery (every request it makes).
	DefaultDiscoveryTimeout = 3 * time.Second
	// DefaultRetryAfter is how long a failed discovery is remembered
	// before the endpoint is asked again.
	DefaultRetryAfter = 5 * time.Minute
	// OllamaPort is the port an Ollama server listens on by default: a
	// base URL on it is taken for an Ollama endpoint.
	OllamaPort = "11434"
	// maxDiscoveryBody bounds an answer read (a router's model list is a
	// few megabytes).
	maxDiscoveryBody = 32 << 20
)

// Target is a model at an endpoint, as discovery asks about it.
type Target struct {
	// Wire is the endpoint's wire format; Anthropic endpoints are not
	// asked (their model list tells nothing of windows or prices).
	Wire    llm.Wire
	BaseURL string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	Model  string
	// Ollama says the endpoint is an Ollama server (provider: ollama);
	// a base URL on port 11434 is one too.
	Ollama bool
}

// IsOllama reports whether t is an Ollama endpoint: provider ollama, or a
// base URL on Ollama's port.
func (t Target) IsOllama() bool { return t.Ollama || OllamaURL(t.BaseURL) }

// OllamaURL reports whether base is on Ollama's default port. Pure.
func OllamaURL(base string) bool {
	u, err := url.Parse(base)
	return err == nil && u.Port() == OllamaPort
}

// key is the cache key of t: endpoint and model.
func (t Target) key() string {
	return strings.TrimRight(t.BaseURL, "/") + "\x00" + t.Model + "\x00" + fmt.Sprint(t.IsOllama())
}

// Discoverer asks endpoints what they know of their models and remembers
// the answers for the life of the process: a worker asks once per
// endpoint and model, not per call. A failure (no answer in time, an
// error status, an answer it cannot read) is logged at debug and means
// "unknown"; it is asked again after RetryAfter. The zero value is ready
// to use; a Discoverer is safe for concurrent use.
type Discoverer struct {
	// Timeout bounds one discovery (0: DefaultDiscoveryTimeout).
	Timeout time.Duration
	// RetryAfter is how long a failure is remembered (0:
	// DefaultRetryAfter).
	RetryAfter time.Duration
	// Logger gets the failures, at debug (nil: none).
	Logger *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu    sync.Mutex
	cache map[string]*discovery
}

// discovery is one cached answer; done is closed once it is known.
type discovery struct {
	done   chan struct{}
	info   Info
	ok     bool
	failed bool
	at     time.Time
}

// Discover is what t's endpoint tells of t's model; false when it tells
// nothing (or could not be asked). Concurrent callers for one target wait
// for one request; a caller whose ctx ends first gets false.
func (d *Discoverer) Discover(ctx context.Context, t Target) (Info, bool) {
	if d == nil || t.BaseURL == "" || t.Model == "" || t.Wire == llm.WireAnthropic {
		return Info{}, false
	}
	entry, fetch := d.entry(t)
	if fetch {
		// The request outlives a caller that gives up: others wait on it.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.timeout())
		info, ok, err := d.fetch(fctx, t)
		cancel()
		if err != nil {
			d.logger().Debug("model discovery failed: the model's window and prices are unknown to the endpoint",
				"endpoint", llm.RedactURL(t.BaseURL), "model", t.Model, "err", err)
		}
		d.mu.Lock()
		entry.info, entry.ok, entry.failed, entry.at = info, ok, err != nil, d.now()
		d.mu.Unlock()
		close(entry.done)
	}
	select {
	case <-entry.done:
	case <-ctx.Done():
		return Info{}, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return entry.info, entry.ok
}

// entry is t's cache entry, and whether the caller is to fill it (a new
// one, or one whose failure is older than RetryAfter).
func (d *Discoverer) entry(t Target) (*discovery, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cache == nil {
		d.cache = map[string]*discovery{}
	}
	k := t.key()
	if e, ok := d.cache[k]; ok {
		select {
		case <-e.done:
			if !e.failed || d.now().Sub(e.at) < d.retryAfter() {
				return e, false
			}
		default:
			return e, false
		}
	}
	e := &discovery{done: make(chan struct{})}
	d.cache[k] = e
	return e, true
}

// fetch asks t's endpoint: Ollama's /api/show, else the model list (and,
// for llama.cpp, /props). ok is false when the answer names nothing.
func (d *Discoverer) fetch(ctx context.Context, t Target) (Info, bool, error) {
	if t.IsOllama() {
		body, err := d.do(ctx, http.MethodPost, rootURL(t.BaseURL, "/api/show"), t.APIKey, map[string]string{"model": t.Model})
		if err != nil {
			return Info{}, false, err
		}
		info, err := parseShow(body)
		if err != nil {
			return Info{}, false, fmt.Errorf("read /api/show: %w", err)
		}
		return info, info != Info{}, nil
	}
	body, err := d.do(ctx, http.MethodGet, joinURL(t.BaseURL, "/models"), t.APIKey, nil)
	if err != nil {
		return Info{}, false, err
	}
	l, err := parseModelList(body, t.Model)
	if err != nil {
		return Info{}, false, fmt.Errorf("read the model list: %w", err)
	}
	if l.llamaCpp {
		// The context the server runs with, not the one the model was
		// trained with, bounds a request.
		if body, err := d.do(ctx, http.MethodGet, rootURL(t.BaseURL, "/props"), t.APIKey, nil); err == nil {
			if n, err := parseProps(body); err == nil && n > 0 {
				l.info.ContextWindow, l.found = n, true
			}
		}
	}
	return l.info, l.found && l.info != Info{}, nil
}

// do sends one request (a JSON body when in is not nil) and returns the
// answer's body; a status other than 200 is an error.
func (d *Discoverer) do(ctx context.Context, method, target, key string, in any) ([]byte, error) {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("encode the request: %w", err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, fmt.Errorf("build the request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err // its text names the URL, which may hold a key
		}
		return nil, fmt.Errorf("%s %s: %w", method, llm.RedactURL(target), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscoveryBody))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the answer: %w", method, llm.RedactURL(target), err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: HTTP %d", method, llm.RedactURL(target), resp.StatusCode)
	}
	return data, nil
}

// joinURL is base with path appended to its path (a query stays). Pure.
func joinURL(base, path string) string {
	u, err := url.Parse(base)
	if err != nil {
		return strings.TrimRight(base, "/") + path
	}
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawPath = ""
	return u.String()
}

// rootURL is path at the server's root: base without its /v1 (Ollama's
// and llama.cpp's native endpoints sit beside the OpenAI-compatible
// ones). Pure.
func rootURL(base, path string) string {
	u, err := url.Parse(base)
	if err != nil {
		return joinURL(strings.TrimSuffix(strings.TrimRight(base, "/"), "/v1"), path)
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/v1") + path
	u.RawPath = ""
	return u.String()
}

func (d *Discoverer) timeout() time.Duration {
	if d.Timeout > 0 {
		return d.Timeout
	}
	return DefaultDiscoveryTimeout
}

func (d *Discoverer) retryAfter() time.Duration {
	if d.RetryAfter > 0 {
		return d.RetryAfter
	}
	return DefaultRetryAfter
}

func (d *Discoverer) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Discoverer) logger() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.New(slog.DiscardHandler)
}
