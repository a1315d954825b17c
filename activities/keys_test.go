package activities

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/keypool"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// Keys of the key pool tests: nothing may log or store them.
const (
	keyAlpha = "sk-alpha-secret"
	keyBeta  = "sk-beta-secret"
)

// keyServer is a fake model server that answers by the key a request
// sends: that key's steps in order, then a plain answer.
type keyServer struct {
	*fakellm.Server
	mu    sync.Mutex
	steps map[string][]fakellm.Step
}

// newKeyServer starts a keyServer closed when the test ends.
func newKeyServer(t *testing.T) *keyServer {
	t.Helper()
	k := &keyServer{steps: map[string][]fakellm.Step{}}
	srv, err := fakellm.Start(fakellm.WithResponder(k.respond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	k.Server = srv
	return k
}

// push queues steps for the requests sending key.
func (k *keyServer) push(key string, steps ...fakellm.Step) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.steps[key] = append(k.steps[key], steps...)
}

func (k *keyServer) respond(r fakellm.Request) fakellm.Step {
	key := sentKey(r)
	k.mu.Lock()
	defer k.mu.Unlock()
	if q := k.steps[key]; len(q) > 0 {
		k.steps[key] = q[1:]
		return q[0]
	}
	return fakellm.Step{Text: "ok"}
}

// sentKey is the key a request sent.
func sentKey(r fakellm.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// keysSince are the keys the requests from the n-th on sent, in order.
func (k *keyServer) keysSince(n int) []string {
	var out []string
	for _, r := range k.Requests()[n:] {
		out = append(out, sentKey(r))
	}
	return out
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// poolActivities are activities on the SQLite store at dsn (opened anew:
// a restart) with the clock, logging into logs.
func poolActivities(t *testing.T, dsn string, clock func() time.Time, logs *bytes.Buffer) *Activities {
	t.Helper()
	store, err := models.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return &Activities{Store: store, Clock: clock, Logger: slog.New(slog.NewTextHandler(logs, nil))}
}

// ask sends one request through callModel, as every model call does.
func ask(t *testing.T, a *Activities, e llm.Endpoint) (llm.Reply, error) {
	t.Helper()
	return askCtx(t.Context(), a, e)
}

// askCtx is ask under ctx.
func askCtx(ctx context.Context, a *Activities, e llm.Endpoint) (llm.Reply, error) {
	return a.callModel(ctx, e, llm.Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}},
		llm.Options{IdleTimeout: 10 * time.Second})
}

// pooled is the endpoint at url with the two keys.
func pooled(url, model string) llm.Endpoint {
	return llm.Endpoint{BaseURL: url, Model: model, APIKey: keyAlpha, Keys: []string{keyAlpha, keyBeta}}
}

// TestKeyPoolRotates: the first key answers 429 with Retry-After: 3000;
// the call moves to the second key at once, in the same attempt (a call
// that waited for the Retry-After would not end before the give-up
// deadline of two minutes); while the first cools down calls send the
// second; a restart (new activities and store on the same file) still sees
// the cool-down; after 3000s the first is sent again. The logs name the
// key by position, never by its text.
func TestKeyPoolRotates(t *testing.T) {
	srv := newKeyServer(t)
	srv.push(keyAlpha, fakellm.Step{Status: 429, ErrorMessage: "slow down", RetryAfter: "3000"})
	dsn := filepath.Join(t.TempDir(), "talaria.db")
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	var logs bytes.Buffer
	a := poolActivities(t, dsn, clock.Now, &logs)
	e := pooled(srv.URL(), "m")

	giveUp, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	reply, err := askCtx(giveUp, a, e)
	if giveUp.Err() != nil {
		t.Fatalf("the first call did not end within two minutes: it waited for the Retry-After (%v)", err)
	}
	if err != nil || reply.Content != "ok" {
		t.Fatalf("first call = %q, %v; want the second key's answer", reply.Content, err)
	}
	if got := srv.keysSince(0); !equalKeys(got, keyAlpha, keyBeta) {
		t.Fatalf("keys sent = %v; want the first, then at once the second", got)
	}

	clock.Add(1000 * time.Second)
	if _, err := ask(t, a, e); err != nil {
		t.Fatal(err)
	}
	if got := srv.keysSince(2); !equalKeys(got, keyBeta) {
		t.Errorf("keys sent while the first cools = %v; want the second only", got)
	}

	restarted := poolActivities(t, dsn, clock.Now, &logs)
	clock.Add(1000 * time.Second)
	if _, err := ask(t, restarted, e); err != nil {
		t.Fatal(err)
	}
	if got := srv.keysSince(3); !equalKeys(got, keyBeta) {
		t.Errorf("keys sent after a restart, 2000s in = %v; want the second only", got)
	}

	clock.Add(1001 * time.Second)
	if _, err := ask(t, restarted, e); err != nil {
		t.Fatal(err)
	}
	if got := srv.keysSince(4); !equalKeys(got, keyAlpha) {
		t.Errorf("keys sent 3001s in = %v; want the first again", got)
	}

	text := logs.String()
	if !strings.Contains(text, "model key cooling down") || !strings.Contains(text, "key 1 of 2") {
		t.Errorf("logs do not tell the cool-down by position: %s", text)
	}
	for _, leak := range []string{"alpha", "beta"} {
		if strings.Contains(text, leak) {
			t.Errorf("logs show a key (%q): %s", leak, text)
		}
	}
	rows, err := restarted.Store.AllKeyCooldowns(t.Context())
	if err != nil || len(rows) != 1 || rows[0].KeyID != keypool.KeyID(keyAlpha) || rows[0].Class != string(turnapi.ClassRateLimit) {
		t.Errorf("stored cool-downs = %+v, %v", rows, err)
	}
	for _, r := range rows {
		if strings.Contains(r.Pool+r.KeyID+r.Endpoint, "secret") {
			t.Errorf("a key is stored: %+v", r)
		}
	}
}

// TestKeyPoolAllCooling: when every key is rate limited the call fails
// with a rate limit whose retry delay is the shortest cool-down, so
// Temporal waits exactly that long; a call while they all cool sends
// nothing and waits for what remains.
func TestKeyPoolAllCooling(t *testing.T) {
	srv := newKeyServer(t)
	srv.push(keyAlpha, fakellm.Step{Status: 429, RetryAfter: "7"})
	srv.push(keyBeta, fakellm.Step{Status: 429, RetryAfter: "3"})
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	a := poolActivities(t, filepath.Join(t.TempDir(), "talaria.db"), clock.Now, &bytes.Buffer{})
	e := pooled(srv.URL(), "m")

	_, err := ask(t, a, e)
	if got := retryDelay(t, err); got != 3*time.Second {
		t.Errorf("retry delay = %s, want 3s (the second key's cool-down)", got)
	}
	if len(srv.Requests()) != 2 {
		t.Fatalf("%d requests, want one per key", len(srv.Requests()))
	}

	clock.Add(time.Second)
	_, err = ask(t, a, e)
	if got := retryDelay(t, err); got != 2*time.Second {
		t.Errorf("retry delay 1s later = %s, want 2s", got)
	}
	if len(srv.Requests()) != 2 {
		t.Errorf("a call while every key cools sent a request")
	}

	clock.Add(2 * time.Second)
	if reply, err := ask(t, a, e); err != nil || reply.Content != "ok" {
		t.Fatalf("after the cool-down: %q, %v", reply.Content, err)
	}
	if got := srv.keysSince(2); !equalKeys(got, keyBeta) {
		t.Errorf("keys sent 3s in = %v; want the second, ready first", got)
	}
}

// retryDelay is the retry delay Temporal gets from a failed call, which
// must be a rate limit.
func retryDelay(t *testing.T, err error) time.Duration {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) || e.Class != turnapi.ClassRateLimit {
		t.Fatalf("err = %v, want a rate limit", err)
	}
	var appErr *temporal.ApplicationError
	if !errors.As(applicationError(e, 1, DefaultMaxRetryAfter), &appErr) || appErr.NonRetryable() {
		t.Fatalf("%v is not retried", err)
	}
	return appErr.NextRetryDelay()
}

// TestKeyPoolRefused: a refused key (401) cools down for long and the call
// moves on to the next; when every key is refused the refusal is not
// retried.
func TestKeyPoolRefused(t *testing.T) {
	srv := newKeyServer(t)
	srv.push(keyAlpha, fakellm.Step{Status: 401, ErrorMessage: "revoked"})
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	a := poolActivities(t, filepath.Join(t.TempDir(), "talaria.db"), clock.Now, &bytes.Buffer{})
	e := pooled(srv.URL(), "m")
	if _, err := ask(t, a, e); err != nil {
		t.Fatalf("a refused first key: %v", err)
	}
	clock.Add(30 * time.Minute)
	if _, err := ask(t, a, e); err != nil {
		t.Fatal(err)
	}
	if got := srv.keysSince(0); !equalKeys(got, keyAlpha, keyBeta, keyBeta) {
		t.Errorf("keys sent = %v; want the refused key once", got)
	}

	srv.push(keyBeta, fakellm.Step{Status: 403, ErrorMessage: "forbidden"})
	_, err := ask(t, a, e)
	var le *llm.Error
	var appErr *temporal.ApplicationError
	if !errors.As(err, &le) || le.Class != turnapi.ClassAuth ||
		!errors.As(applicationError(le, 1, DefaultMaxRetryAfter), &appErr) || !appErr.NonRetryable() {
		t.Errorf("every key refused: %v; want a refusal that is not retried", err)
	}

	// A minute on, every key is still cooling for its refusal: the first
	// is tried once (it was renewed meanwhile), and used from then on.
	clock.Add(time.Minute)
	before := len(srv.keysSince(0))
	if _, err := ask(t, a, e); err != nil {
		t.Fatalf("a renewed key: %v", err)
	}
	if _, err := ask(t, a, e); err != nil {
		t.Fatal(err)
	}
	if got := srv.keysSince(before); !equalKeys(got, keyAlpha, keyAlpha) {
		t.Errorf("keys sent after every key was refused = %v; want the first, tried again and kept", got)
	}
}

// TestKeyPoolFallbackApart: a fallback endpoint's rate limit cools its own
// key only, even with the same server and keys as the primary.
func TestKeyPoolFallbackApart(t *testing.T) {
	srv := newKeyServer(t)
	srv.push(keyAlpha, fakellm.Step{Status: 429, ErrorMessage: "slow down", RetryAfter: "5"})
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	a := poolActivities(t, filepath.Join(t.TempDir(), "talaria.db"), clock.Now, &bytes.Buffer{})
	primary, fallback := pooled(srv.URL(), "m"), pooled(srv.URL(), "fallback-model")

	if _, err := ask(t, a, fallback); err != nil {
		t.Fatal(err)
	}
	if _, err := ask(t, a, primary); err != nil {
		t.Fatal(err)
	}
	if got := srv.keysSince(0); !equalKeys(got, keyAlpha, keyBeta, keyAlpha) {
		t.Errorf("keys sent = %v; want the primary to send its first key", got)
	}
	other := newKeyServer(t)
	if _, err := ask(t, a, pooled(other.URL(), "fallback-model")); err != nil {
		t.Fatal(err)
	}
	if got := other.keysSince(0); !equalKeys(got, keyAlpha) {
		t.Errorf("keys sent to another endpoint = %v; want its first key", got)
	}
	rows, err := a.Store.AllKeyCooldowns(t.Context())
	if err != nil || len(rows) != 1 || rows[0].Pool != keypool.OfEndpoint(fallback).ID {
		t.Errorf("cool-downs = %+v, %v; want the fallback's key only", rows, err)
	}
}

// TestKeyPoolOfOne: an endpoint of one key is called as before: its error
// as it came, nothing stored.
func TestKeyPoolOfOne(t *testing.T) {
	srv := newKeyServer(t)
	srv.push("only", fakellm.Step{Status: 429, RetryAfter: "5"})
	a := poolActivities(t, filepath.Join(t.TempDir(), "talaria.db"), nil, &bytes.Buffer{})
	_, err := ask(t, a, llm.Endpoint{BaseURL: srv.URL(), Model: "m", APIKey: "only", Keys: []string{"only"}})
	var e *llm.Error
	if !errors.As(err, &e) || e.Class != turnapi.ClassRateLimit || e.RetryAfter != 5*time.Second {
		t.Errorf("err = %v; want the provider's rate limit", err)
	}
	if rows, err := a.Store.AllKeyCooldowns(t.Context()); err != nil || len(rows) != 0 {
		t.Errorf("cool-downs = %+v, %v; want none", rows, err)
	}
}

// TestKeyPoolRealTime: with the real clock, a key rate limited for 1s is
// sent again once its stored cool-down has passed. (What is sent while it
// cools is TestKeyPoolRotates' to show, on a clock that a loaded machine
// cannot move past the cool-down between two calls.)
func TestKeyPoolRealTime(t *testing.T) {
	srv := newKeyServer(t)
	srv.push(keyAlpha, fakellm.Step{Status: 429, RetryAfter: "1"})
	a := poolActivities(t, filepath.Join(t.TempDir(), "talaria.db"), nil, &bytes.Buffer{})
	e := pooled(srv.URL(), "m")
	if _, err := ask(t, a, e); err != nil {
		t.Fatal(err)
	}
	rows, err := a.Store.AllKeyCooldowns(t.Context())
	if err != nil || len(rows) != 1 {
		t.Fatalf("cool-downs = %+v, %v; want the first key's", rows, err)
	}
	for time.Now().Before(rows[0].Until) {
		time.Sleep(time.Until(rows[0].Until) + time.Millisecond)
	}
	if _, err := ask(t, a, e); err != nil {
		t.Fatal(err)
	}
	if got := srv.keysSince(0); !equalKeys(got, keyAlpha, keyBeta, keyAlpha) {
		t.Errorf("keys sent = %v", got)
	}
}

// equalKeys reports whether got is want, in order.
func equalKeys(got []string, want ...string) bool { return slices.Equal(got, want) }
