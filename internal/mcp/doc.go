// Package mcp gives the agent the tools of MCP servers, through the
// official MCP Go SDK: each configured server (a stdio command or a
// streamable HTTP URL) is asked for its tools when the worker starts, and
// each becomes a tool of the registry named mcp_<server>_<tool>, with the
// server's schema. A call runs as an activity on a session kept per
// server; a server that died is started again on the next call, and a
// call it cannot answer is a clear tool error.
package mcp
