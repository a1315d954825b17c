package engine

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakememory"
)

// mem0Config is a configuration with Mem0 on at url, its key in the
// variable MEM0_KEY (mem0Env).
func mem0Config(url string) config.Config {
	cfg := config.Default("")
	cfg.Memory.Recall, cfg.Memory.Provider = true, config.MemoryMem0
	cfg.Memory.Mem0 = config.Endpoint{BaseURL: url, APIKeyEnv: "MEM0_KEY"}
	return cfg
}

func mem0Env(string) string { return "mem0-key" }

func TestMemoryProviderBuildsExternal(t *testing.T) {
	t.Parallel()
	for _, name := range []string{config.MemoryHoncho, config.MemoryMem0, config.MemorySupermemory} {
		cfg := config.Default("")
		cfg.Memory.Recall, cfg.Memory.Provider = true, name
		if _, err := MemoryProvider(cfg, nil, nil); err == nil || !strings.Contains(err.Error(), "base_url") {
			t.Errorf("%s without an endpoint: %v", name, err)
		}
		*map[string]*config.Endpoint{
			config.MemoryHoncho: &cfg.Memory.Honcho, config.MemoryMem0: &cfg.Memory.Mem0, config.MemorySupermemory: &cfg.Memory.Supermemory,
		}[name] = config.Endpoint{BaseURL: "http://127.0.0.1:1"}
		p, err := MemoryProvider(cfg, nil, nil)
		if err != nil || p.Name() != name {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !memorySyncs(cfg) || !TurnTemplate(cfg, "").MemorySync {
			t.Errorf("%s: turns are not synced", name)
		}
		if got := memoryTools(cfg, p); len(got) != 1 {
			t.Errorf("%s: %d tools offered, want 1", name, len(got))
		}
		cfg.Tools.Disabled = []string{"recall"}
		if got := memoryTools(cfg, p); len(got) != 0 {
			t.Errorf("%s: the recall toolset disabled, %d tools offered", name, len(got))
		}
		cfg.Tools.Disabled, cfg.Tools.Enabled = nil, []string{"file"}
		if got := memoryTools(cfg, p); len(got) != 0 {
			t.Errorf("%s: tools.enabled without recall, %d tools offered", name, len(got))
		}
	}
	cfg := config.Default("")
	cfg.Memory.Recall = true
	if memorySyncs(cfg) {
		t.Error("the built-in recall syncs turns")
	}
	if memoryTools(cfg, nil) != nil {
		t.Error("tools offered with memory off")
	}
}

// TestForgetSession: deleting a session has Mem0 (its fake) delete the
// session's memories; with Mem0 down, one warning naming it.
func TestForgetSession(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewMem0("mem0-key")
	defer fake.Close()
	fake.Seed(fakememory.Mem0Memory{Memory: "a fact", UserID: "user", RunID: "gone"})
	fake.Seed(fakememory.Mem0Memory{Memory: "another", UserID: "user", RunID: "kept"})
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	cfg := mem0Config(fake.URL())
	forgetSession(context.Background(), cfg, mem0Env, "gone", logger)
	if got := fake.RequestsTo("DELETE", "/v1/memories/"); len(got) != 1 || got[0].RawQuery != "run_id=gone" {
		t.Fatalf("deletes: %+v", got)
	}
	if logs.Len() != 0 {
		t.Fatalf("logs: %s", logs.String())
	}
	fake.Close()
	forgetSession(context.Background(), cfg, mem0Env, "gone", logger)
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), "provider=mem0") {
		t.Fatalf("logs with Mem0 down:\n%s", logs.String())
	}
}
