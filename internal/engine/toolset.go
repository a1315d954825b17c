package engine

import (
	"sort"

	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/models"
)

// builtinTools returns every built-in tool a worker can offer, before
// tools.enabled narrows them: home is $TALARIA_HOME (memory), st the store
// (session_search).
func builtinTools(home string, st *models.Store) []tools.Tool {
	return []tools.Tool{tools.ReadFileTool{}, tools.WriteFileTool{}, tools.TerminalTool{},
		tools.TodoTool{}, tools.ClarifyTool{}, tools.MemoryTool{Home: home},
		tools.SessionSearchTool{Searcher: storeSearcher{st}}}
}

// ToolNames returns the names of the built-in tools, sorted: the names a
// job's or a turn's tool list may use.
func ToolNames() []string {
	all := builtinTools("", nil)
	names := make([]string, len(all))
	for i, t := range all {
		names[i] = t.Name()
	}
	sort.Strings(names)
	return names
}
