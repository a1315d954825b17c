package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/keypool"
	"github.com/talaria-agent/talaria/models"
)

// TestKeyPoolsStatus: status lists each configured endpoint with several
// keys (primary and fallbacks), each key by position and digest, ready or
// cooling down and why, then cooling keys of endpoints it does not see;
// no key in the text or the JSON.
func TestKeyPoolsStatus(t *testing.T) {
	ctx := t.Context()
	store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	cfg := config.Config{
		Model: config.Model{BaseURL: "http://primary.example/v1", APIKey: "sk-one,sk-two", Name: "m"},
		FallbackProviders: []config.Provider{
			{BaseURL: "http://single.example/v1", APIKey: "sk-single"},
			{ProviderOptions: config.ProviderOptions{Provider: "anthropic", APIKeys: []string{"sk-a", "sk-b", "sk-c"}}, Model: "claude"},
		},
	}
	now := time.Now()
	primary := keypool.Of("openai", "http://primary.example/v1", "m", []string{"sk-one", "sk-two"})
	for _, c := range []models.KeyCooldown{
		{Pool: primary.ID, KeyID: primary.Keys[0], Endpoint: primary.Endpoint, Until: now.Add(4200 * time.Millisecond), Class: "rate_limit", Status: 429},
		{Pool: primary.ID, KeyID: primary.Keys[1], Endpoint: primary.Endpoint, Until: now.Add(-time.Minute), Class: "rate_limit", Status: 429},
		{Pool: "elsewhere", KeyID: "abcdef012345", Endpoint: "openai http://other.example/v1 big", Until: now.Add(time.Hour), Class: "auth", Status: 401},
		{Pool: "over", KeyID: "bbbbbbbbbbbb", Endpoint: "openai http://old.example/v1 m", Until: now.Add(-time.Hour), Class: "auth"},
	} {
		if err := store.SetKeyCooldown(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	pools := keyPools(ctx, cfg, store, "no-such-session", now)
	var out bytes.Buffer
	printKeyPools(&out, pools)
	want := strings.Join([]string{
		"  key pools:",
		"    primary openai http://primary.example/v1 m:",
		"      key 1 of 2 (" + primary.Keys[0] + "): cooling down for 4s (rate limited)",
		"      key 2 of 2 (" + primary.Keys[1] + "): ready",
		"    fallback 2 anthropic https://api.anthropic.com claude:",
		"      key 1 of 3 (" + keypool.KeyID("sk-a") + "): ready",
		"      key 2 of 3 (" + keypool.KeyID("sk-b") + "): ready",
		"      key 3 of 3 (" + keypool.KeyID("sk-c") + "): ready",
		"    other openai http://other.example/v1 big:",
		"      key abcdef012345: cooling down for 1h0m0s (refused)",
		"",
	}, "\n")
	if out.String() != want {
		t.Errorf("status:\n%s\nwant:\n%s", out.String(), want)
	}
	data, err := json.Marshal(statusReport{KeyPools: pools})
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"key_pools"`, `"role":"primary"`, `"position":1`, `"key_id"`, `"state":"ready"`, `"cooling_until"`, `"reason":"rate_limit"`} {
		if !strings.Contains(string(data), field) {
			t.Errorf("JSON lacks %s: %s", field, data)
		}
	}
	if strings.Contains(out.String()+string(data), "sk-") {
		t.Errorf("a key is shown:\n%s\n%s", out.String(), data)
	}
}

// TestDescribePool: a pool whose cool-downs cannot be read shows its keys
// as unknown, with why.
func TestDescribePool(t *testing.T) {
	pool := keypool.Of("openai", "http://x/v1", "m", []string{"k1", "k2"})
	now := time.Now()
	tests := []struct {
		name    string
		cooling map[string]keypool.Cooldown
		readErr error
		want    []string
	}{
		{"none cooling", nil, nil, []string{"ready", "ready"}},
		{"one cooling", map[string]keypool.Cooldown{pool.Keys[1]: {KeyID: pool.Keys[1], Until: now.Add(time.Minute), Class: "auth"}}, nil,
			[]string{"ready", "cooling down for 1m0s (refused)"}},
		{"not read", nil, errors.New("database is locked"), []string{"unknown", "unknown"}},
	}
	for _, tt := range tests {
		p := describePool("primary", pool, tt.cooling, tt.readErr, now)
		if len(p.Keys) != len(tt.want) || (tt.readErr != nil) != (p.Error != "") {
			t.Fatalf("%s: %+v", tt.name, p)
		}
		for i, k := range p.Keys {
			if k.State != tt.want[i] || k.Ready != (tt.want[i] == "ready") || k.Position != i+1 || k.Of != 2 {
				t.Errorf("%s: key %d = %+v, want %q", tt.name, i+1, k, tt.want[i])
			}
		}
	}
}
