package keypool

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

var now = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// TestKeyID: a key's id is a short digest, stable, different per key, and
// holds none of the key's characters as they are.
func TestKeyID(t *testing.T) {
	t.Parallel()
	tests := []struct{ a, b string }{
		{"sk-one", "sk-two"},
		{"KEY_1", "KEY_2"},
		{"", " "},
	}
	for _, tt := range tests {
		a, b := KeyID(tt.a), KeyID(tt.b)
		if len(a) != keyIDLen || a != KeyID(tt.a) || a == b {
			t.Errorf("KeyID(%q) = %q, KeyID(%q) = %q: want distinct stable %d-character digests", tt.a, a, tt.b, b, keyIDLen)
		}
		if tt.a != "" && strings.Contains(a, tt.a) {
			t.Errorf("KeyID(%q) = %q shows the key", tt.a, a)
		}
	}
}

// TestOf: a pool is named by its wire, redacted URL and model, never a key;
// endpoints that differ in any of them are different pools.
func TestOf(t *testing.T) {
	t.Parallel()
	base := Of("openai", "https://api.example.com/v1", "m", []string{"secret-1", "secret-2"})
	if base.Endpoint != "openai https://api.example.com/v1 m" || len(base.ID) != poolIDLen {
		t.Fatalf("pool = %+v", base)
	}
	if len(base.Keys) != 2 || base.Keys[0] != KeyID("secret-1") || base.Keys[1] != KeyID("secret-2") {
		t.Fatalf("keys = %v", base.Keys)
	}
	if Of("", "https://api.example.com/v1", "m", nil).ID != base.ID {
		t.Error("an empty wire is not openai's pool")
	}
	secret := Of("openai", "https://user:hunter2@api.example.com/v1?api-key=sk-zzz", "m", []string{"sk-zzz"})
	for _, leak := range []string{"hunter2", "sk-zzz"} {
		if strings.Contains(secret.Endpoint+secret.ID+strings.Join(secret.Keys, ""), leak) {
			t.Errorf("pool %+v shows %q", secret, leak)
		}
	}
	others := []Pool{
		Of("anthropic", "https://api.example.com/v1", "m", nil),
		Of("openai", "https://other.example.com/v1", "m", nil),
		Of("openai", "https://api.example.com/v1", "m2", nil),
	}
	for _, o := range others {
		if o.ID == base.ID {
			t.Errorf("%s shares the pool of %s", o.Endpoint, base.Endpoint)
		}
	}
	e := OfEndpoint(llm.Endpoint{Wire: llm.WireOpenAI, BaseURL: "https://api.example.com/v1", Model: "m", Keys: []string{"secret-1", "secret-2"}})
	if e.ID != base.ID || len(e.Keys) != 2 {
		t.Errorf("OfEndpoint = %+v, want %+v", e, base)
	}
	if got := Position(1, 3); got != "key 2 of 3" {
		t.Errorf("Position = %q", got)
	}
}

// TestCoolFor: rate limits rest for their Retry-After (a default without
// one, capped), refusals for long, anything else not at all.
func TestCoolFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want time.Duration
		ok   bool
	}{
		{"429 with Retry-After", &llm.Error{Class: turnapi.ClassRateLimit, Status: 429, RetryAfter: 5 * time.Second}, 5 * time.Second, true},
		{"429 without", &llm.Error{Class: turnapi.ClassRateLimit, Status: 429}, DefaultRateLimitCooldown, true},
		{"429 asking a day", &llm.Error{Class: turnapi.ClassRateLimit, RetryAfter: 24 * time.Hour}, MaxRateLimitCooldown, true},
		{"wrapped", fmt.Errorf("call: %w", &llm.Error{Class: turnapi.ClassRateLimit, RetryAfter: time.Second}), time.Second, true},
		{"401", &llm.Error{Class: turnapi.ClassAuth, Status: 401}, AuthCooldown, true},
		{"403", &llm.Error{Class: turnapi.ClassAuth, Status: 403, RetryAfter: time.Second}, AuthCooldown, true},
		{"out of credit", &llm.Error{Class: turnapi.ClassBilling, Status: 402}, AuthCooldown, true},
		{"overloaded", &llm.Error{Class: turnapi.ClassOverloaded, Status: 529, RetryAfter: time.Second}, 0, false},
		{"server error", &llm.Error{Class: turnapi.ClassServer, Status: 500}, 0, false},
		{"bad request", &llm.Error{Class: turnapi.ClassBadRequest, Status: 400}, 0, false},
		{"not a model error", errors.New("boom"), 0, false},
		{"success", nil, 0, false},
	}
	for _, tt := range tests {
		got, ok := CoolFor(tt.err)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: CoolFor = %s %v, want %s %v", tt.name, got, ok, tt.want, tt.ok)
		}
		c, ok := Cool("id", tt.err, now)
		if ok != tt.ok || (ok && (!c.Until.Equal(now.Add(tt.want)) || c.KeyID != "id" || c.Class == "")) {
			t.Errorf("%s: Cool = %+v %v", tt.name, c, ok)
		}
	}
}

// TestPick: the first key in order that is not cooling; when all cool,
// none, with the shortest wait, a rate limit's before a refusal's.
func TestPick(t *testing.T) {
	t.Parallel()
	keys := []string{"a", "b", "c"}
	cool := func(id string, in time.Duration, class turnapi.ErrorClass) Cooldown {
		return Cooldown{KeyID: id, Until: now.Add(in), Class: class}
	}
	rl, auth := turnapi.ClassRateLimit, turnapi.ClassAuth
	tests := []struct {
		name    string
		cooling []Cooldown
		want    Choice
	}{
		{"none cooling", nil, Choice{Index: 0}},
		{"the first cooling", []Cooldown{cool("a", 5*time.Second, rl)}, Choice{Index: 1}},
		{"the first's rest is over", []Cooldown{cool("a", 0, rl), cool("b", time.Second, rl)}, Choice{Index: 0}},
		{"the first's rest was", []Cooldown{cool("a", -time.Hour, rl)}, Choice{Index: 0}},
		{"only the last ready", []Cooldown{cool("a", time.Second, rl), cool("b", time.Second, auth)}, Choice{Index: 2}},
		{"a key of another pool", []Cooldown{cool("z", time.Hour, rl)}, Choice{Index: 0}},
		{"all cooling: the shortest", []Cooldown{cool("a", 9*time.Second, rl), cool("b", 4*time.Second, rl), cool("c", 7*time.Second, rl)},
			Choice{Index: -1, Wait: 4 * time.Second, Class: rl}},
		{"all cooling: a rate limit before a refusal", []Cooldown{cool("a", time.Second, auth), cool("b", 30*time.Second, rl), cool("c", time.Minute, auth)},
			Choice{Index: -1, Wait: 30 * time.Second, Class: rl}},
		{"all refused", []Cooldown{cool("a", time.Hour, auth), cool("b", 30*time.Minute, auth), cool("c", time.Minute*45, auth)},
			Choice{Index: -1, Wait: 30 * time.Minute, Class: auth}},
		{"the later of two for a key", []Cooldown{cool("a", time.Hour, rl), cool("a", -time.Second, rl)}, Choice{Index: 1}},
	}
	for _, tt := range tests {
		got := Pick(keys, ByKey(tt.cooling), now)
		if got != tt.want || got.Ready() != (tt.want.Index >= 0) {
			t.Errorf("%s: Pick = %+v, want %+v", tt.name, got, tt.want)
		}
	}
	if got := Pick(nil, nil, now); got.Ready() || got.Wait != 0 {
		t.Errorf("an empty pool: %+v", got)
	}
}

// TestStates: each key by position and digest, ready or cooling and why.
func TestStates(t *testing.T) {
	t.Parallel()
	p := Of("openai", "http://x/v1", "m", []string{"k1", "k2", "k3"})
	cooling := ByKey([]Cooldown{
		{KeyID: p.Keys[0], Until: now.Add(4200 * time.Millisecond), Class: turnapi.ClassRateLimit},
		{KeyID: p.Keys[1], Until: now.Add(-time.Second), Class: turnapi.ClassRateLimit},
		{KeyID: p.Keys[2], Until: now.Add(100 * time.Millisecond), Class: turnapi.ClassAuth},
	})
	got := States(p, cooling, now)
	want := []string{"cooling down for 4s (rate limited)", "ready", "cooling down for 1s (refused)"}
	if len(got) != len(want) {
		t.Fatalf("states = %+v", got)
	}
	for i, s := range got {
		if s.String() != want[i] || s.Position != i+1 || s.KeyID != p.Keys[i] || s.Ready() != (i == 1) {
			t.Errorf("key %d: %+v %q, want %q", i+1, s, s.String(), want[i])
		}
	}
}

// TestExhausted: a pool with every key cooling is a rate limit that
// retries when the first key is ready, or the refusal when all are
// refused; the last key's failure is kept.
func TestExhausted(t *testing.T) {
	t.Parallel()
	p := Of("openai", "http://x/v1", "m", []string{"k1", "k2"})
	last := &llm.Error{Class: turnapi.ClassRateLimit, Status: 429, Message: "slow down", RetryAfter: time.Minute}
	tests := []struct {
		name       string
		c          Choice
		last       *llm.Error
		class      turnapi.ErrorClass
		status     int
		retryAfter time.Duration
		text       string
	}{
		{"rate limited now", Choice{Index: -1, Wait: 5 * time.Second, Class: turnapi.ClassRateLimit}, last,
			turnapi.ClassRateLimit, 429, 5 * time.Second, "slow down; all 2 keys of openai http://x/v1 m are cooling down; the first is ready in 5s (rate limited)"},
		{"cooling from before", Choice{Index: -1, Wait: 3 * time.Second, Class: turnapi.ClassRateLimit}, nil,
			turnapi.ClassRateLimit, 0, 3 * time.Second, "all 2 keys"},
		{"all refused", Choice{Index: -1, Wait: time.Hour, Class: turnapi.ClassAuth}, &llm.Error{Class: turnapi.ClassAuth, Status: 401, Message: "bad key"},
			turnapi.ClassAuth, 401, 0, "bad key; all 2 keys"},
		{"the last refused, another rate limited", Choice{Index: -1, Wait: 2 * time.Second, Class: turnapi.ClassRateLimit},
			&llm.Error{Class: turnapi.ClassAuth, Status: 401, Message: "bad key"}, turnapi.ClassRateLimit, 0, 2 * time.Second, "(rate limited)"},
		{"no class", Choice{Index: -1}, nil, turnapi.ClassRateLimit, 0, 0, "all 2 keys"},
	}
	for _, tt := range tests {
		e := Exhausted(p, tt.c, tt.last)
		if e.Class != tt.class || e.Status != tt.status || e.RetryAfter != tt.retryAfter || !strings.Contains(e.Message, tt.text) {
			t.Errorf("%s: %+v", tt.name, e)
		}
		if tt.last != nil && !errors.Is(e, tt.last) {
			t.Errorf("%s: the last failure is not kept", tt.name)
		}
	}
}

// TestReason names each class of rest.
func TestReason(t *testing.T) {
	t.Parallel()
	for c, want := range map[turnapi.ErrorClass]string{
		turnapi.ClassRateLimit: "rate limited", turnapi.ClassAuth: "refused", turnapi.ClassBilling: "billing",
		"": "unknown", turnapi.ClassServer: "server_error",
	} {
		if got := Reason(c); got != want {
			t.Errorf("Reason(%q) = %q, want %q", c, got, want)
		}
	}
}
