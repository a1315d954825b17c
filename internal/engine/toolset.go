package engine

import (
	"slices"
	"sort"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/models"
)

// builtinTools returns every built-in tool a worker can offer, before
// tools.enabled narrows them: home is $TALARIA_HOME (memory), st the store
// (session_search; the home and current chats of send_message), send how
// send_message hands its messages to the gateway, procs keeps what the
// process tool starts.
func builtinTools(home string, st *models.Store, send tools.ChatSendFunc, procs *tools.Processes) []tools.Tool {
	msg := tools.SendMessageTool{Send: send}
	if st != nil {
		msg.Chats = st
	}
	return []tools.Tool{tools.ReadFileTool{}, tools.WriteFileTool{}, tools.PatchTool{}, tools.SearchFilesTool{}, tools.TerminalTool{},
		tools.TodoTool{}, tools.ClarifyTool{}, tools.MemoryTool{Home: home}, tools.WebFetchTool{},
		tools.SkillsListTool{Home: home}, tools.SkillViewTool{Home: home}, tools.SkillManageTool{Home: home}, tools.ProcessTool{Processes: procs}, tools.ExecuteCodeTool{},
		tools.SessionSearchTool{Searcher: storeSearcher{st}}, msg}
}

// ToolNames returns the names of the built-in tools, sorted: the names a
// job's or a turn's tool list may use.
func ToolNames() []string {
	all := builtinTools("", nil, nil, nil)
	names := make([]string, len(all))
	for i, t := range all {
		names[i] = t.Name()
	}
	sort.Strings(names)
	return names
}

// CatalogEntry is a built-in tool and whether cfg offers it.
type CatalogEntry struct {
	Tool    tools.Tool
	Enabled bool
}

// ToolCatalog lists every built-in tool, sorted by name, with whether
// cfg's tools.enabled and tools.disabled offer it.
func ToolCatalog(cfg config.Config) ([]CatalogEntry, error) {
	all := builtinTools("", nil, nil, nil)
	offered, err := enabledTools(cfg.Tools.Enabled, cfg.Tools.Disabled, all...)
	if err != nil {
		return nil, err
	}
	out := make([]CatalogEntry, len(all))
	for i, t := range all {
		out[i] = CatalogEntry{Tool: t, Enabled: slices.ContainsFunc(offered, func(o tools.Tool) bool { return o.Name() == t.Name() })}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool.Name() < out[j].Tool.Name() })
	return out, nil
}
