package tools

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Meta is what the rest of the system knows of a built-in tool besides its
// definition: the toolset that names it in tool lists, the sentence of the
// system prompt's tool guidance, what bounds it or makes it ask (for
// `talaria tools`) and whether an execute_code program may call it. A tool
// declares it in its own file (see [Spec]); toolsets, the prompt's guidance
// and `talaria tools` are derived from the catalog of built-ins.
type Meta struct {
	Toolset  string
	Guidance string
	// GuidanceRank places the guidance sentence: lower first; a tool
	// without one (0) comes after those with one, by toolset, then name.
	GuidanceRank int
	Approval     string
	// FromCode: an execute_code program may call the tool, when the
	// worker offers it. The file, web and shell tools are callable; tools
	// that talk to people, keep the agent's notes or start what outlives
	// the program are not.
	FromCode bool
}

// Described is a tool that declares its Meta; every built-in tool is one.
type Described interface {
	Meta() Meta
}

// MetaOf is t's Meta; the zero Meta for a tool that declares none (an MCP
// server's).
func MetaOf(t Tool) Meta {
	if d, ok := t.(Described); ok {
		return d.Meta()
	}
	return Meta{}
}

// Services are what a worker gives the built-in tools that reach beyond
// the call's Env: $TALARIA_HOME, the store's session search and chats, the
// gateway's send, the background processes and the web search backend.
// The zero value builds every tool, each saying what it misses when called.
type Services struct {
	Home      string
	Searcher  SessionSearcher
	Chats     ChatDirectory
	Send      ChatSendFunc
	Processes *Processes
	WebSearch WebSearchTool
}

// catalog holds the built-in tools, each added by its own file.
var catalog struct {
	sync.Mutex
	makers []func(Services) Tool
}

// builtin adds a built-in tool to the catalog: mk builds it over a
// worker's services. Each tool's file calls it once, from a package-level
// variable or init, so adding a tool is adding its file.
func builtin(mk func(Services) Tool) struct{} {
	catalog.Lock()
	defer catalog.Unlock()
	catalog.makers = append(catalog.makers, mk)
	return struct{}{}
}

// Builtins are the built-in tools over s, sorted by name. It panics on a
// catalog that repeats a name or holds a tool without a toolset, which the
// package's tests rule out.
func Builtins(s Services) []Tool {
	catalog.Lock()
	makers := slices.Clone(catalog.makers)
	catalog.Unlock()
	out := make([]Tool, 0, len(makers))
	for _, m := range makers {
		out = append(out, m(s))
	}
	slices.SortFunc(out, func(a, b Tool) int { return cmp.Compare(a.Name(), b.Name()) })
	for i, t := range out {
		if i > 0 && out[i-1].Name() == t.Name() {
			panic(fmt.Sprintf("tools: two built-in tools are named %s", t.Name()))
		}
		if MetaOf(t).Toolset == "" {
			panic(fmt.Sprintf("tools: built-in tool %s has no toolset", t.Name()))
		}
	}
	return out
}

// BuiltinNames are the built-in tools' names, sorted.
func BuiltinNames() []string { return slices.Clone(builtinNames()) }

// builtinNames and builtinMeta are the catalog's names and Meta, read once
// (every built-in file has added its tool before any code runs).
var (
	builtinNames = sync.OnceValue(func() []string {
		var names []string
		for _, t := range Builtins(Services{}) {
			names = append(names, t.Name())
		}
		return names
	})
	builtinMeta = sync.OnceValue(func() map[string]Meta {
		out := map[string]Meta{}
		for _, t := range Builtins(Services{}) {
			out[t.Name()] = MetaOf(t)
		}
		return out
	})
)

// toolsetOrder is the order toolsets are listed in, and their tools'
// guidance given in: planning first, as the prompt asks for a plan before
// work. A toolset not listed comes after these, by name.
var toolsetOrder = []string{"planning", "file", "shell", "web", "recall", "skills", "messages", "delegation"}

// toolsetRank orders toolsets as toolsetOrder does.
func toolsetRank(a, b string) int {
	ia, ib := slices.Index(toolsetOrder, a), slices.Index(toolsetOrder, b)
	if ia < 0 {
		ia = len(toolsetOrder)
	}
	if ib < 0 {
		ib = len(toolsetOrder)
	}
	return cmp.Or(cmp.Compare(ia, ib), cmp.Compare(a, b))
}

// toolsets are the built-in toolsets: each toolset's tools, by name.
var toolsets = sync.OnceValue(func() map[string][]string {
	out := map[string][]string{}
	for _, name := range builtinNames() {
		m := builtinMeta()[name]
		out[m.Toolset] = append(out[m.Toolset], name)
	}
	return out
})

// Guidance is the tool-use guidance of the offered tools named in names,
// one sentence a tool that has one, by GuidanceRank, then toolset order,
// then name; tools not built in (an MCP server's) have none. Pure but for
// the catalog.
func Guidance(names []string) []string {
	rank := func(n string) int {
		if r := builtinMeta()[n].GuidanceRank; r > 0 {
			return r
		}
		return math.MaxInt
	}
	sorted := slices.Clone(names)
	slices.SortFunc(sorted, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), toolsetRank(builtinMeta()[a].Toolset, builtinMeta()[b].Toolset), cmp.Compare(a, b))
	})
	var out []string
	for i, n := range sorted {
		if g := builtinMeta()[n].Guidance; g != "" && (i == 0 || sorted[i-1] != n) {
			out = append(out, g)
		}
	}
	return out
}
