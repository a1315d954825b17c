package engine

import (
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/tools"
)

// TestToolNames: the names a job may list are every tool a worker offers,
// sorted, and tools.enabled accepts each of them.
func TestToolNames(t *testing.T) {
	t.Parallel()
	names := ToolNames()
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Fatalf("ToolNames() = %v: not sorted, or repeats a name", names)
	}
	for _, core := range []string{"clarify", "delegate_task", "execute_code", "memory", "patch", "process", "read_file", "search_files", "send_message", "session_search", "skill_manage", "skill_view", "skills_list", "terminal", "todo", "web_fetch", "web_search", "write_file"} {
		if !slices.Contains(names, core) {
			t.Errorf("ToolNames() lacks %s", core)
		}
	}
	offered, err := enabledTools(names, nil, builtinTools("", nil, nil, nil, tools.WebSearchTool{})...)
	if err != nil || len(offered) != len(names) {
		t.Fatalf("enabledTools(all names) = %d tools, %v", len(offered), err)
	}
}

// TestWebSearchNeedsABackend: without a search service configured,
// web_search is not offered and the catalog says what to set; with one it
// is, over that service.
func TestWebSearchNeedsABackend(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tt := range []struct {
		search  config.WebSearch
		offered bool
		backend string
	}{
		{config.WebSearch{}, false, ""},
		{config.WebSearch{Backend: "exa", BraveAPIKey: "b"}, false, ""},
		{config.WebSearch{TavilyAPIKey: "t"}, true, "tavily"},
		{config.WebSearch{SearXNGURL: "http://localhost:8888"}, true, "searxng"},
	} {
		cfg := config.Default(t.TempDir())
		cfg.Web.Search = tt.search
		list, err := ToolCatalog(cfg)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(list, func(e CatalogEntry) bool { return e.Tool.Name() == "web_search" })
		if e := list[i]; e.Enabled != tt.offered || (e.Note == "") == !tt.offered || !tt.offered && !strings.Contains(e.Note, "_API_KEY") {
			t.Errorf("%+v: catalog entry %+v", tt.search, e)
		}
		ws := webSearchTool(cfg)
		offered := withoutUnconfigured(cfg, []tools.Tool{tools.ReadFile, ws.Tool()}, quiet)
		if got := len(offered) == 2; got != tt.offered {
			t.Errorf("%+v: offered %d tools", tt.search, len(offered))
		}
		if tt.offered && ws.Backend.Name() != tt.backend {
			t.Errorf("%+v: backend %s, want %s", tt.search, ws.Backend.Name(), tt.backend)
		}
	}
}
