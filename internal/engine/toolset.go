package engine

import (
	"sort"

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
		tools.SkillsListTool{Home: home}, tools.SkillViewTool{Home: home}, tools.SkillManageTool{Home: home}, tools.ProcessTool{Processes: procs},
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
