package memory

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakememory"
	"github.com/talaria-agent/talaria/internal/tools"
)

// testKey is the key the fakes accept; testKeyEnv names its variable.
const (
	testKey    = "sk-test-7f3a9c"
	testKeyEnv = "MEMORY_TEST_KEY"
)

// external is the adapter name over a fake at base, with the test key.
func external(t *testing.T, name, base string) Provider {
	t.Helper()
	getenv := func(k string) string {
		if k == testKeyEnv {
			return testKey
		}
		return ""
	}
	p, err := NewExternal(name, config.Endpoint{BaseURL: base, APIKeyEnv: testKeyEnv}, getenv, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// toolOf is the provider's only tool, which must be named name.
func toolOf(t *testing.T, p Provider, name string) tools.Tool {
	t.Helper()
	ts := p.Tools()
	if len(ts) != 1 || ts[0].Name() != name {
		t.Fatalf("%s's tools = %v, want only %s", p.Name(), ts, name)
	}
	return ts[0]
}

// fakeServer is what the down and slow checks need of a fake.
type fakeServer interface {
	Stall()
	Close()
}

// checkSlow: a stalled fake makes Prefetch give up by the context's
// deadline with an error wrapping ErrUnavailable.
func checkSlow(t *testing.T, p Provider, fake fakeServer) {
	t.Helper()
	fake.Stall()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := p.Prefetch(ctx, Query{SessionID: "now", User: "ann", Text: "bees"})
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Prefetch from a slow %s: %v, want ErrUnavailable by the deadline", p.Name(), err)
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Prefetch returned before its deadline passed: %v", err)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Fatalf("the error shows the key: %v", err)
	}
}

// checkDown: a closed fake makes Prefetch fail at once with an error
// wrapping ErrUnavailable, before the context's deadline.
func checkDown(t *testing.T, p Provider, fake fakeServer) {
	t.Helper()
	fake.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err := p.Prefetch(ctx, Query{SessionID: "now", User: "ann", Text: "bees"})
	if !errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
		t.Fatalf("Prefetch from a %s that is down: %v (ctx %v), want ErrUnavailable", p.Name(), err, ctx.Err())
	}
	if strings.Contains(err.Error(), testKey) {
		t.Fatalf("the error shows the key: %v", err)
	}
}

func TestNewExternalRefuses(t *testing.T) {
	t.Parallel()
	getenv := func(string) string { return "" }
	for _, tt := range []struct {
		name string
		e    config.Endpoint
		want string
	}{
		{"recall", config.Endpoint{BaseURL: "http://x"}, `"recall" is not an external memory provider`},
		{"zep", config.Endpoint{BaseURL: "http://x"}, `"zep" is not an external memory provider`},
		{config.MemoryHoncho, config.Endpoint{}, "memory.honcho.base_url is not set"},
		{config.MemoryMem0, config.Endpoint{BaseURL: "ftp://x"}, `memory.mem0.base_url "ftp://x" must be an http(s) URL`},
		{config.MemorySupermemory, config.Endpoint{BaseURL: "https://api.supermemory.ai", APIKeyEnv: "SM_KEY"}, "memory.supermemory: the variable SM_KEY (api_key_env) is empty"},
	} {
		_, err := NewExternal(tt.name, tt.e, getenv, nil, nil)
		if err == nil || err.Error() != tt.want && !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("NewExternal(%s, %+v) = %v, want %q", tt.name, tt.e, err, tt.want)
		}
	}
	for _, name := range []string{config.MemoryHoncho, config.MemoryMem0, config.MemorySupermemory} {
		p, err := NewExternal(name, config.Endpoint{BaseURL: "http://127.0.0.1:1/"}, getenv, nil, nil)
		if err != nil || p.Name() != name {
			t.Errorf("NewExternal(%s) = %v, %v", name, p, err)
		}
	}
}

func TestCutText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"  short  ", 10, "short"},
		{"abcdefghij", 10, "abcdefghij"},
		{"abcdefghijk", 10, "abcdefg…"},
		{"ééééé", 8, "éé…"},
	} {
		if got := cutText(tt.in, tt.n); got != tt.want || len(got) > tt.n {
			t.Errorf("cutText(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestSafeID(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"abc-DEF-123", "abc-DEF-123"},
		{"telegram:42", "telegram_3a42"},
		{"a_b", "a_5fb"},
		{"a b/c", "a_20b_2fc"},
	} {
		if got := safeID(tt.in); got != tt.want {
			t.Errorf("safeID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestToolsActAsTheOwner: each provider's tool acts as the owner the
// store gave the call's session, and refuses, sending nothing, when that
// owner is not known: a chat's call never falls back to the operator's
// memory.
func TestToolsActAsTheOwner(t *testing.T) {
	t.Parallel()
	mem0 := fakememory.NewMem0(testKey)
	t.Cleanup(mem0.Close)
	sm := fakememory.NewSupermemory(testKey)
	t.Cleanup(sm.Close)
	honcho := fakememory.NewHoncho(testKey)
	t.Cleanup(honcho.Close)
	for _, tt := range []struct {
		provider, url, tool, args string
		requests                  func() int
	}{
		{"mem0", mem0.URL(), Mem0SearchName, `{"query":"taxes"}`, func() int { return len(mem0.Requests()) }},
		{"supermemory", sm.URL(), SupermemorySearchName, `{"query":"taxes"}`, func() int { return len(sm.Requests()) }},
		{"honcho", honcho.URL(), HonchoAskName, `{"question":"taxes"}`, func() int { return len(honcho.Requests()) }},
	} {
		before := tt.requests()
		_, err := toolOf(t, external(t, tt.provider, tt.url), tt.tool).Run(t.Context(), tools.Env{SessionID: "s", Owner: "telegram:dm:42"},
			json.RawMessage(tt.args))
		if !errors.Is(err, errOwnerUnknown) || tt.requests() != before {
			t.Fatalf("%s with its session's owner unknown: %v, %d requests sent", tt.tool, err, tt.requests()-before)
		}
	}
	// Known: Mem0 is asked for the owner's memories.
	if _, err := toolOf(t, external(t, "mem0", mem0.URL()), Mem0SearchName).Run(t.Context(),
		tools.Env{SessionID: "s", Owner: "telegram:dm:42", OwnerKnown: true}, json.RawMessage(`{"query":"taxes"}`)); err != nil {
		t.Fatal(err)
	}
	var search struct {
		Filters struct {
			UserID string `json:"user_id"`
		} `json:"filters"`
	}
	reqs := mem0.RequestsTo("POST", "/v3/memories/search/")
	if len(reqs) != 1 || reqs[0].JSON(&search) != nil || search.Filters.UserID != "telegram:dm:42" {
		t.Fatalf("mem0_search searched as %q, want the owner", search.Filters.UserID)
	}
}

func TestItemsText(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, tt := range []struct {
		items []Item
		want  string
	}{
		{nil, "Nothing found."},
		{[]Item{{Summary: "likes\nbees", At: at, SessionID: "s1"}, {Passages: []string{"a", "b"}}}, "1. likes bees (2026-03-04, session s1)\n2. a / b"},
	} {
		if got := itemsText(tt.items); got != tt.want {
			t.Errorf("itemsText = %q, want %q", got, tt.want)
		}
	}
}
