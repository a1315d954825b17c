package memory

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/tools"
)

// Bounds of what an external provider's answers may hold.
const (
	// MaxAnswerBytes bounds one answer of an external provider: a larger
	// one is refused, not read.
	MaxAnswerBytes = 256 << 10
	// MaxTextBytes bounds one recalled text (a fact, a passage): longer
	// ones are cut.
	MaxTextBytes = 1000
	// MaxToolBytes bounds what a provider's tool returns to the model.
	MaxToolBytes = 8000
	// defaultUser is the user a provider files a turn under when the turn
	// names none, and the one its tools ask about when the session's user
	// is not known in this process.
	defaultUser = "user"
)

// NewExternal is the adapter of an external memory service: name is
// config.MemoryHoncho, MemoryMem0 or MemorySupermemory; e says where it
// is and which variable holds its key (read with getenv; an endpoint with
// no api_key_env sends no key, as a self-hosted service without auth
// wants). Calls go through hc (nil: a client of its own) and are bounded
// by their contexts; logger hears what is worth a line (never the key).
func NewExternal(name string, e config.Endpoint, getenv func(string) string, hc *http.Client, logger *slog.Logger) (Provider, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if hc == nil {
		hc = &http.Client{}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	switch name {
	case config.MemoryHoncho, config.MemoryMem0, config.MemorySupermemory:
	default:
		return nil, fmt.Errorf("memory: %q is not an external memory provider (honcho, mem0 or supermemory)", name)
	}
	c, err := newAPIClient(name, e, getenv, hc)
	if err != nil {
		return nil, err
	}
	logger = logger.With("memory_provider", name)
	switch name {
	case config.MemoryHoncho:
		return newHoncho(c, e.Workspace, logger), nil
	case config.MemoryMem0:
		return newMem0(c, logger), nil
	default:
		return newSupermemory(c, logger), nil
	}
}

// apiClient calls one service's JSON API.
type apiClient struct {
	name string
	base *url.URL
	hc   *http.Client
	// scheme and key make the Authorization header ("Bearer", "Token");
	// an empty key sends none.
	scheme, key string
}

// newAPIClient checks e and reads its key.
func newAPIClient(name string, e config.Endpoint, getenv func(string) string, hc *http.Client) (*apiClient, error) {
	if strings.TrimSpace(e.BaseURL) == "" {
		return nil, fmt.Errorf("memory.%s.base_url is not set", name)
	}
	u, err := url.Parse(strings.TrimSpace(e.BaseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("memory.%s.base_url %q must be an http(s) URL", name, e.BaseURL)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	c := &apiClient{name: name, base: u, hc: hc, scheme: "Bearer"}
	if name == config.MemoryMem0 {
		c.scheme = "Token"
	}
	if e.APIKeyEnv != "" {
		c.key = strings.TrimSpace(getenv(e.APIKeyEnv))
		if c.key == "" {
			return nil, fmt.Errorf("memory.%s: the variable %s (api_key_env) is empty", name, e.APIKeyEnv)
		}
	}
	return c, nil
}

// call sends body (nil: none) as JSON to path (joined to the base URL,
// with query) and decodes the answer into out (nil: the answer is read
// and dropped). Every failure wraps ErrUnavailable: a transport error, a
// deadline, a status other than 2xx, an answer over MaxAnswerBytes or
// one that is not the JSON expected. No error holds the key.
func (c *apiClient) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	u := *c.base
	u.Path += path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.name, path, err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return c.fail(path, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", c.scheme+" "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = ctxErr
		}
		return c.fail(path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	if err != nil {
		return c.fail(path, err)
	}
	if len(raw) > MaxAnswerBytes {
		return c.fail(path, fmt.Errorf("answer larger than %d KiB", MaxAnswerBytes>>10))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.fail(path, &statusError{status: resp.StatusCode, msg: resp.Status + ": " + oneLine(string(raw), 200)})
	}
	if out == nil || (len(bytes.TrimSpace(raw)) == 0 && method == http.MethodDelete) {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return c.fail(path, fmt.Errorf("unexpected answer: %v", err))
	}
	return nil
}

// fail words a failed call: the service, the route and why, wrapping
// ErrUnavailable, with the key (should a service echo it) masked.
func (c *apiClient) fail(path string, err error) error {
	var se *statusError
	if errors.As(err, &se) {
		return &statusError{status: se.status, msg: fmt.Sprintf("%s %s: %s", c.name, path, c.mask(se.msg))}
	}
	if msg := err.Error(); c.key != "" && strings.Contains(msg, c.key) {
		err = errors.New(c.mask(msg)) // the cause is not kept: it holds the key
	}
	return fmt.Errorf("%w: %s %s: %w", ErrUnavailable, c.name, path, err)
}

// mask is s with the key, should it be there, masked.
func (c *apiClient) mask(s string) string {
	if c.key == "" {
		return s
	}
	return strings.ReplaceAll(s, c.key, "[key]")
}

// statusError is a service's answer of a status other than 2xx.
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string { return ErrUnavailable.Error() + ": " + e.msg }

// Unwrap makes a statusError an ErrUnavailable.
func (e *statusError) Unwrap() error { return ErrUnavailable }

// isNotFound says whether err is a service's 404.
func isNotFound(err error) bool {
	var se *statusError
	return errors.As(err, &se) && se.status == http.StatusNotFound
}

// oneLine is s on one line, cut to at most n bytes. Pure.
func oneLine(s string, n int) string {
	return cutText(strings.Join(strings.Fields(s), " "), n)
}

// cutText cuts s to at most n bytes at a character boundary, marking a
// cut with "…". Pure.
func cutText(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:max(cut, 0)]) + "…"
}

// limitOf is q's limit, defaulted.
func limitOf(q Query) int {
	if q.Limit > 0 {
		return q.Limit
	}
	return DefaultLimit
}

// userOf is the user a turn or a query is filed under.
func userOf(user string) string {
	if strings.TrimSpace(user) == "" {
		return defaultUser
	}
	return user
}

// maxServiceID bounds an id at the services (Honcho's names and
// Supermemory's tags and customIds take at most 100 characters).
const maxServiceID = 100

// serviceID is s as a service's id (letters, digits, '-', '_'; at most
// maxServiceID): prefix and safeID(s), or, when that is too long, prefix,
// "h-" and a hash of s. Pure.
func serviceID(prefix, s string) string {
	id := prefix + safeID(s)
	if len(id) <= maxServiceID {
		return id
	}
	sum := sha256.Sum256([]byte(s))
	return prefix + "h-" + hex.EncodeToString(sum[:])[:48]
}

// safeID is s as an id of the characters services allow in ids (letters,
// digits, '-'); every other byte, '_' included, is written "_xx" in hex,
// so distinct strings stay distinct. Pure.
func safeID(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '-' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' {
			b.WriteByte(ch)
		} else {
			fmt.Fprintf(&b, "_%02x", ch)
		}
	}
	return b.String()
}

// toolUser is the provider's user a tool call acts as: the owner of the
// session it runs in, as the store says (tools.Env.Owner). A call whose
// owner is not known is refused, never run as the default user.
func toolUser(env tools.Env) (string, error) {
	if !env.OwnerKnown {
		return "", errOwnerUnknown
	}
	return env.Owner, nil
}

// errOwnerUnknown: a provider's tool ran where the session's owner could
// not be read.
var errOwnerUnknown = errors.New("whose memory to search is not known for this session")

// errNoQuestion: a provider's tool was called without a question.
var errNoQuestion = errors.New("the query is empty")
