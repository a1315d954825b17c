package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/tools"
)

// Bounds of what a server may put into a tool's definition.
const (
	maxDescription = 1024
	maxSchemaBytes = 16 << 10
	maxNameLen     = 64
)

// Tool is one MCP server tool as a registry tool.
type Tool struct {
	servers        *Servers
	server, remote string
	name           string
	def            openai.Tool
}

// ToolName is the registry name of a server's tool: mcp_<server>_<tool>,
// characters a function name cannot hold replaced by '_'. Pure.
func ToolName(server, tool string) string {
	name := tools.FunctionName("mcp_" + server + "_" + tool)
	if len(name) > maxNameLen {
		name = name[:maxNameLen]
	}
	return name
}

// newTool wraps a server's tool; a schema that is not a JSON object, or
// too large, is refused.
func newTool(s *Servers, server string, t *sdk.Tool) (*Tool, error) {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || len(schema) > maxSchemaBytes || !bytes.HasPrefix(bytes.TrimSpace(schema), []byte("{")) {
		return nil, fmt.Errorf("MCP server %s: tool %q has no usable input schema", server, t.Name)
	}
	desc := cmp.Or(strings.TrimSpace(t.Description), t.Title)
	if r := []rune(desc); len(r) > maxDescription {
		desc = string(r[:maxDescription]) + "…"
	}
	name := ToolName(server, t.Name)
	desc = fmt.Sprintf("[MCP server %s, tool %s] %s", server, t.Name, desc)
	return &Tool{servers: s, server: server, remote: t.Name, name: name, def: openai.Tool{
		Type:     openai.ToolTypeFunction,
		Function: &openai.FunctionDefinition{Name: name, Description: desc, Parameters: json.RawMessage(schema)},
	}}, nil
}

// Name implements tools.Tool.
func (t *Tool) Name() string { return t.name }

// Definition implements tools.Tool.
func (t *Tool) Definition() openai.Tool { return t.def }

// Idempotent implements tools.Tool: what a server's tool does is not
// known, so a retry after a crash is answered "outcome unknown".
func (t *Tool) Idempotent() bool { return false }

// Run implements tools.Tool: the call goes to the server (started again
// when it died); its text content is the result.
func (t *Tool) Run(ctx context.Context, _ tools.Env, raw json.RawMessage) (string, error) {
	args := map[string]any{}
	if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if err := json.Unmarshal(trimmed, &args); err != nil {
			return "", fmt.Errorf("%w for %s: arguments must be a JSON object: %v", tools.ErrInvalidArguments, t.name, err)
		}
	}
	res, err := t.servers.Call(ctx, t.server, t.remote, args)
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.name, err)
	}
	text := render(res)
	if res.IsError {
		return "", fmt.Errorf("%s: the tool failed: %s", t.name, text)
	}
	return text, nil
}

// render is a call's content as text: text parts as they are, other
// parts named, structured content as JSON when there is no text. Pure.
func render(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case *sdk.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]", c.Resource.URI))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if data, err := json.Marshal(res.StructuredContent); err == nil {
			return string(data)
		}
	}
	return strings.Join(parts, "\n")
}

// Discover asks every server for its tools. A server that cannot be
// reached is logged and left out (its tools are not offered by this
// worker); the others' tools are returned, sorted by server.
func (s *Servers) Discover(ctx context.Context) []tools.Tool {
	var out []tools.Tool
	seen := map[string]bool{}
	for _, name := range s.Names() {
		list, err := s.ServerTools(ctx, name)
		if err != nil {
			s.logger.Warn("MCP server left out: its tools are not offered", "server", name, "error", err)
			continue
		}
		for _, t := range list {
			tool, err := newTool(s, name, t)
			if err == nil && seen[tool.Name()] {
				err = fmt.Errorf("its name %s is taken by another tool of the server", tool.Name())
			}
			if err != nil {
				s.logger.Warn("MCP tool left out", "server", name, "tool", t.Name, "error", err)
				continue
			}
			seen[tool.Name()] = true
			out = append(out, tool)
		}
	}
	s.logger.Debug("MCP tools discovered", "count", len(out))
	return out
}
