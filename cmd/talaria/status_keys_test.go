package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
)

// TestPrintKeyPools: one line a pool and a key, by position and digest
// (a pool status does not see configured: by digest only); no key in the
// text or the JSON.
func TestPrintKeyPools(t *testing.T) {
	until := time.Now().Add(time.Hour)
	pools := []engine.KeyPoolStatus{
		{Role: "primary", Endpoint: "openai http://primary.example/v1 m", Pool: "p1", Keys: []engine.KeyStatus{
			{Position: 1, Of: 2, KeyID: "aaaaaaaaaaaa", State: "cooling down for 4s (rate limited)", CoolingUntil: &until, Reason: "rate_limit"},
			{Position: 2, Of: 2, KeyID: "bbbbbbbbbbbb", Ready: true, State: "ready"}}},
		{Role: "fallback 1", Endpoint: "anthropic https://api.anthropic.com claude\x1b", Pool: "p2", Error: "database is locked",
			Keys: []engine.KeyStatus{{Position: 1, Of: 1, KeyID: "cccccccccccc", State: "unknown"}}},
		{Role: "other", Endpoint: "openai http://other.example/v1 big", Pool: "p3", Keys: []engine.KeyStatus{
			{KeyID: "abcdef012345", State: "cooling down for 1h0m0s (refused)", CoolingUntil: &until, Reason: "auth"}}},
	}
	var out bytes.Buffer
	printKeyPools(&out, pools)
	want := strings.Join([]string{
		"  key pools:",
		"    primary openai http://primary.example/v1 m:",
		"      key 1 of 2 (aaaaaaaaaaaa): cooling down for 4s (rate limited)",
		"      key 2 of 2 (bbbbbbbbbbbb): ready",
		"    fallback 1 anthropic https://api.anthropic.com claude\\x1b: (cool-downs not read: database is locked)",
		"      key 1 of 1 (cccccccccccc): unknown",
		"    other openai http://other.example/v1 big:",
		"      key abcdef012345: cooling down for 1h0m0s (refused)",
		"",
	}, "\n")
	if out.String() != want {
		t.Errorf("status:\n%s\nwant:\n%s", out.String(), want)
	}
	data, err := json.Marshal(engine.Status{KeyPools: pools})
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"key_pools"`, `"role":"primary"`, `"position":1`, `"key_id"`, `"state":"ready"`, `"cooling_until"`, `"reason":"rate_limit"`} {
		if !strings.Contains(string(data), field) {
			t.Errorf("JSON lacks %s: %s", field, data)
		}
	}
	var empty bytes.Buffer
	if printKeyPools(&empty, nil); empty.Len() != 0 {
		t.Errorf("no pools printed %q", empty.String())
	}
}
