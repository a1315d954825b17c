package engine

import (
	"log/slog"
	"maps"
	"slices"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/websearch"
	"github.com/talaria-agent/talaria/models"
)

// builtinTools returns every built-in tool a worker can offer, before
// tools.enabled narrows them: home is $TALARIA_HOME (memory, skills), st
// the store (session_search; the home and current chats of send_message),
// send how send_message hands its messages to the gateway, procs keeps
// what the process tool starts, search is web_search.
func builtinTools(home string, st *models.Store, send tools.ChatSendFunc, procs *tools.Processes, search tools.WebSearchTool) []tools.Tool {
	s := tools.Services{Home: home, Searcher: storeSearcher{st}, Send: send, Processes: procs, WebSearch: search}
	if st != nil {
		s.Chats = st
	}
	return tools.Builtins(s)
}

// webSearchTool is web_search over the backend cfg chooses; without one
// its calls say what to configure.
func webSearchTool(cfg config.Config) tools.WebSearchTool {
	b, err := websearch.FromConfig(cfg.Web.Search, nil)
	if err != nil {
		return tools.WebSearchTool{Missing: cfg.Web.Search.Missing()}
	}
	return tools.WebSearchTool{Backend: b}
}

// unconfigured says which built-in tools cfg cannot offer, and why: they
// need a service it does not name. Pure.
func unconfigured(cfg config.Config) map[string]string {
	out := map[string]string{}
	if !cfg.Web.Search.Configured() {
		out["web_search"] = cfg.Web.Search.Missing()
	}
	return out
}

// withoutUnconfigured drops the tools cfg cannot offer, logging why.
func withoutUnconfigured(cfg config.Config, offered []tools.Tool, logger *slog.Logger) []tools.Tool {
	off := unconfigured(cfg)
	return slices.DeleteFunc(offered, func(t tools.Tool) bool {
		why, drop := off[t.Name()]
		if drop {
			logger.Info("tool not offered", "tool", t.Name(), "reason", why)
		}
		return drop
	})
}

// ToolNames returns the names of the built-in tools, sorted: the names a
// job's or a turn's tool list may use.
func ToolNames() []string { return tools.BuiltinNames() }

// CatalogEntry is a built-in tool and whether cfg offers it.
type CatalogEntry struct {
	Tool    tools.Tool
	Enabled bool
	// Note says why a tool the lists allow is not offered.
	Note string
}

// ToolCatalog lists every built-in tool, sorted by name, with whether
// cfg's tools.enabled and tools.disabled offer it.
func ToolCatalog(cfg config.Config) ([]CatalogEntry, error) {
	all := builtinTools("", nil, nil, nil, tools.WebSearchTool{})
	offered, err := enabledTools(cfg.Tools.Enabled, cfg.Tools.Disabled, all...)
	if err != nil {
		return nil, err
	}
	off := unconfigured(cfg)
	out := make([]CatalogEntry, len(all))
	for i, t := range all {
		e := CatalogEntry{Tool: t, Enabled: slices.ContainsFunc(offered, func(o tools.Tool) bool { return o.Name() == t.Name() })}
		if why, ok := off[t.Name()]; ok && e.Enabled {
			e.Enabled, e.Note = false, why
		}
		out[i] = e
	}
	return out, nil
}

// UnattendedTools is the tool list of a run nobody answers questions in (a
// goal, a background task): list, or every tool when it is empty (the
// built-in ones and each MCP server's), without clarify. Pure.
func UnattendedTools(cfg config.Config, list []string) []string {
	if len(list) == 0 {
		list = ToolNames()
		for _, server := range slices.Sorted(maps.Keys(cfg.MCPServers)) {
			list = append(list, tools.MCPToolset(server))
		}
	}
	return slices.DeleteFunc(slices.Clone(list), func(n string) bool { return n == tools.ClarifyName })
}

// offeredGuidance is the system prompt's tool guidance for the offered
// tools: nil when none is offered (no paragraph), else each offered
// built-in tool's sentence (possibly none, for MCP tools alone).
func offeredGuidance(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	return append([]string{}, tools.Guidance(names)...)
}
