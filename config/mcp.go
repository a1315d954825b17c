package config

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"time"
)

// DefaultMCPTimeout bounds one MCP call (and a connection) by default.
const DefaultMCPTimeout = 60 * time.Second

// MCPServer is one MCP server the agent's tools come from: a command
// speaking stdio, or a streamable HTTP URL.
type MCPServer struct {
	// Command and Args start a stdio server; Env adds variables to the
	// tools' environment allowlist (never the worker's own); Cwd is where
	// it runs.
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	Cwd     string            `yaml:"cwd"`
	// URL and Headers reach a streamable HTTP server.
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	// Timeout bounds a call; 0: DefaultMCPTimeout.
	Timeout time.Duration `yaml:"timeout"`
	// Tools narrows the server's tools by their MCP names.
	Tools struct {
		Include []string `yaml:"include"`
		Exclude []string `yaml:"exclude"`
	} `yaml:"tools"`
}

// mcpServerName is what a server may be called: its tools are named
// mcp_<server>_<tool>.
var mcpServerName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// checkMCP says what is wrong with the MCP servers' configuration.
func checkMCP(servers map[string]MCPServer) []string {
	names := slices.Sorted(maps.Keys(servers))
	var problems []string
	for _, n := range names {
		s := servers[n]
		key := "mcp_servers." + n
		switch {
		case !mcpServerName.MatchString(n):
			problems = append(problems, fmt.Sprintf("%s: name a server with 1-32 lower-case letters, digits, '_' or '-'", key))
		case (s.Command == "") == (s.URL == ""):
			problems = append(problems, fmt.Sprintf("%s needs either command (a stdio server) or url (streamable HTTP), not both", key))
		case s.URL != "":
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				problems = append(problems, fmt.Sprintf("%s.url %q: give an http(s) URL", key, s.URL))
			}
		}
		if s.Timeout < 0 {
			problems = append(problems, fmt.Sprintf("%s.timeout must not be negative", key))
		}
	}
	return problems
}
