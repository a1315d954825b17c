package loop

import (
	"slices"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/editdistance"
)

var testTools = []string{"browser_click", "read_file", "search_files", "terminal", "todo", "write_file"}

var repairCases = []struct {
	name   string
	known  []string
	want   string
	wantOK bool
}{
	{"todo", testTools, "todo", true},
	{"TodoTool_tool", testTools, "todo", true},
	{"browser-click", testTools, "browser_click", true},
	{"serch_files", testTools, "search_files", true},
	{"READ_FILE", testTools, "read_file", true},
	{`write_file"`, testTools, "write_file", true},
	{"terminal<|im_end|>", testTools, "terminal", true},
	{"Read File", testTools, "read_file", true},
	{"completely_unknown", testTools, "", false},
	{"", testTools, "", false},
	{"  terminal  ", testTools, "terminal", true},
	{"write_file'}", testTools, "write_file", true},
	{"ReadFile", testTools, "read_file", true},
	{"TodoTool", testTools, "todo", true},
	{"todo-tool", testTools, "todo", true},
	{"terminal_tool_tool", testTools, "terminal", true},
	{"termnal", testTools, "terminal", true},
	{"brwser_clik", testTools, "browser_click", true},
	{"<tool_call>", testTools, "", false},
	{"todo", nil, "", false},
	{"HTTPGet", []string{"http_get"}, "http_get", true},
	{"getHTTPResponse", []string{"get_http_response"}, "get_http_response", true},
	{"Read2File", []string{"read2_file"}, "read2_file", true},
	{"already\"known", []string{"already\"known"}, "already\"known", true},
	// Fuzzy ties go to the alphabetically first name, whatever the order.
	{"abcdx", []string{"abcdz", "abcdy"}, "abcdy", true},
	{"abcdx", []string{"abcdy", "abcdz"}, "abcdy", true},
	// Below the threshold: 2*7/21 ≈ 0.667.
	{"delete_file", []string{"write_file"}, "", false},

	// A fuzzy repair never changes the operation (Hermes' namespace-prefix
	// guard, tests/run_agent/test_repair_tool_call_name.py).
	{"kb_aed", nsTools, "", false},
	{"mcp_knowledge_kb_aet", nsTools, "", false},
	{"kb_search", nsTools, "kb_search", true},
	{"kb_get", nsTools, "kb_get", true},
	{"kb_saerch", nsTools, "kb_search", true},
	{"kb_searc", nsTools, "kb_search", true},
	{"terminall", nsTools, "terminal", true},
	{"mcp_knowledge_kb_serach", nsTools, "mcp_knowledge_kb_search", true},
	{"kanban_list", []string{"kanban_link", "kanban_show"}, "", false},
	{"kb_set", []string{"kb_get"}, "", false},
	// Too many edits for a short name: a different word, not a typo.
	{"tool", testTools, "", false},
	{"tool", nil, "", false},
	{"_tool", testTools, "", false},
	{"ThisIsNotRemotelyARealToolName_tool", testTools, "", false},
	// Hermes' class-like emissions.
	{"BrowserClick_tool", testTools, "browser_click", true},
	{"write-file_Tool", testTools, "write_file", true},
	{"WriteFileTool", testTools, "write_file", true},
	// A name said twice is the name.
	{"terminalterminal", testTools, "terminal", true},
	{"read_fileread_file", testTools, "read_file", true},
	{"read_file_read_file", testTools, "read_file", true},
	{"TodoTodo", testTools, "todo", true},
	{"todotodotodo", testTools, "todo", true},
	{"termnaltermnal", testTools, "terminal", true},
	{"mcp_mcp_knowledge_kb_get", nsTools, "mcp_knowledge_kb_get", true},
	{"mcp_mcp_mcp_knowledge_kb_get", nsTools, "mcp_knowledge_kb_get", true},
	// Not a repetition of a known name.
	{"todoterminal", testTools, "", false},
	// Hermes' corrupted MCP prefixes (TestMcpPrefixRepairFastPath): a typo
	// in the namespace is repaired, a bare or garbled name is not.
	{"mmcp_knowledge_kb_get", mcpTools, "mcp_knowledge_kb_get", true},
	{"xmcp_knowledge_kb_get", mcpTools, "mcp_knowledge_kb_get", true},
	{"mcp_knowledge_kb_get", mcpTools, "mcp_knowledge_kb_get", true},
	{"kb_search", mcpTools, "", false},
	{"4pkoPc7Uh", mcpTools, "", false},
}

// mcpTools are Hermes' MCP_VALID.
var mcpTools = []string{"mcp_knowledge_kb_get", "mcp_knowledge_kb_search", "mcp_proxmox_get_nodes"}

// nsTools hold sibling operations under shared prefixes, as in Hermes'
// VALID_NS.
var nsTools = []string{
	"todo", "patch", "browser_click", "browser_navigate", "web_search", "read_file", "write_file", "terminal",
	"kb_search", "kb_get", "kb_add", "kb_update",
	"mcp_knowledge_kb_search", "mcp_knowledge_kb_get", "mcp_knowledge_kb_add",
}

func TestSameOperation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		candidate, known string
		want             bool
	}{
		{"kb_aed", "kb_add", false},
		{"mcp_knowledge_kb_aet", "mcp_knowledge_kb_get", false},
		{"mcp_knowledge_kb_aet", "mcp_knowledge_kb_add", false},
		{"tool", "todo", false},
		{"kb_saerch", "kb_search", true},
		{"termnal", "terminal", true},
		{"brwser_clik", "browser_click", true},
		{"serch_files", "search_files", true},
		{"kb_ad", "kb_add", true},
		{"kb", "kb_add", false},
		{"", "", true},
	}
	for _, tt := range tests {
		if got := SameOperation(tt.candidate, tt.known); got != tt.want {
			t.Errorf("SameOperation(%q, %q) = %v, want %v", tt.candidate, tt.known, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"tool", "todo", 2}, {"saerch", "search", 1},
		{"serach", "search", 1}, {"termnal", "terminal", 1}, {"aed", "add", 1}, {"ca", "abc", 3},
	}
	for _, tt := range tests {
		if got := editdistance.Runes([]rune(tt.a), []rune(tt.b)); got != tt.want {
			t.Errorf("editdistance.Runes(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestUndoubled(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"terminalterminal", "terminal"},
		{"read_fileread_file", "read_file"},
		{"read_file_read_file", "read_file"},
		{"a-a", "a"},
		{"xyzxyzxyzxyz", "xyz"},
		{"aa", "a"},
		{"__", "__"},
		{"terminal", "terminal"},
		{"", ""},
		{strings.Repeat("ab", 200), strings.Repeat("ab", 200)},
	}
	for _, tt := range tests {
		if got := undoubled(tt.in); got != tt.want {
			t.Errorf("undoubled(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRepairToolName(t *testing.T) {
	t.Parallel()
	for _, tt := range repairCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := RepairToolName(tt.name, tt.known)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("RepairToolName(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestCamelToSnake(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"ReadFile", "read_file"},
		{"TodoTool", "todo_tool"},
		{"TodoTool_tool", "todo_tool_tool"},
		{"HTTPGet", "http_get"},
		{"getHTTPResponse", "get_http_response"},
		{"read_file", "read_file"},
		{"Read File", "read_file"},
		{"Read-File", "read_file"},
		{"ABC", "abc"},
		{"A", "a"},
		{"", ""},
		{"Über", "über"},
	}
	for _, tt := range tests {
		if got := camelToSnake(tt.in); got != tt.want {
			t.Errorf("camelToSnake(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStripToolSuffix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"todo_tool", "todo", true},
		{"todo-tool", "todo", true},
		{"todotool", "todo", true},
		{"TodoTool", "Todo", true},
		{"tool", "", true},
		{"todo", "todo", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got, ok := stripToolSuffix(tt.in); got != tt.want || ok != tt.ok {
			t.Errorf("stripToolSuffix(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzRepairToolName(f *testing.F) {
	for _, tt := range repairCases {
		f.Add(tt.name, "", "")
	}
	f.Add("abcdx", "abcdz", "abcdy")
	f.Add("HTTPGet", "http_get", "Http-Get")
	f.Fuzz(func(t *testing.T, name, extra1, extra2 string) {
		known := append(slices.Clone(testTools), extra1, extra2)
		got, ok := RepairToolName(name, known)
		if ok && (got == "" || !slices.Contains(known, got)) {
			t.Fatalf("RepairToolName(%q) = %q, not a known name", name, got)
		}
		if !ok && got != "" {
			t.Fatalf("RepairToolName(%q) = %q, false; want an empty name", name, got)
		}
		reversed := slices.Clone(known)
		slices.Reverse(reversed)
		if got2, ok2 := RepairToolName(name, reversed); got2 != got || ok2 != ok {
			t.Fatalf("RepairToolName(%q) depends on the order of known: %q, %v then %q, %v", name, got, ok, got2, ok2)
		}
		for _, k := range known {
			if k == "" {
				continue
			}
			if got, ok := RepairToolName(k, known); got != k || !ok {
				t.Fatalf("RepairToolName(%q) = %q, %v; want itself", k, got, ok)
			}
		}
	})
}
