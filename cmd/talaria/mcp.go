package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

func newMCPCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "mcp",
		Short: "List the configured MCP servers and their tools, or test one",
		Long: `The agent gets the tools of the MCP servers in config.yaml's mcp_servers (a
command speaking stdio, or a streamable HTTP url), named mcp_<server>_<tool>.
list starts or reaches every server and shows its tools; test NAME does it for
one and exits 1 when it cannot be reached.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(
		mcpCommand("list", "Every configured MCP server and the tools it offers", noArgs, func(ctx context.Context, w io.Writer, cfg config.Config, _ []string) error {
			if len(cfg.MCPServers) == 0 {
				fmt.Fprintln(w, "no MCP servers are configured (mcp_servers in config.yaml)")
				return nil
			}
			servers := talaria.NewMCP(cfg.MCPServers, talaria.ToolPolicy(cfg), nil)
			defer servers.Close()
			for _, name := range servers.Names() {
				printServer(ctx, w, servers, name)
			}
			return nil
		}),
		mcpCommand("test NAME", "Reach one MCP server and list its tools (exit 1 when it cannot be reached)", exactArgs(1, "a server's name"),
			func(ctx context.Context, w io.Writer, cfg config.Config, args []string) error {
				if _, ok := cfg.MCPServers[args[0]]; !ok {
					return usagef("no MCP server %q is configured (mcp_servers in config.yaml)", args[0])
				}
				servers := talaria.NewMCP(cfg.MCPServers, talaria.ToolPolicy(cfg), nil)
				defer servers.Close()
				if !printServer(ctx, w, servers, args[0]) {
					return &exitError{code: exitFailure, err: fmt.Errorf("MCP server %s cannot be reached", args[0])}
				}
				return nil
			}),
	)
	return c
}

// printServer prints a server's tools and reports whether it answered.
func printServer(ctx context.Context, w io.Writer, servers *talaria.MCPServers, name string) bool {
	list, err := servers.ServerTools(ctx, name)
	if err != nil {
		fmt.Fprintf(w, "%s: unavailable: %s\n", name, oneLine(err))
		return false
	}
	fmt.Fprintf(w, "%s: %d tools\n", name, len(list))
	for _, t := range list {
		fmt.Fprintf(w, "  %s — %s\n", talaria.MCPToolName(name, t.Name), oneLineText(t.Description, 120))
	}
	return true
}

// mcpCommand builds an mcp sub-command with the configuration loaded.
func mcpCommand(use, short string, args cobra.PositionalArgs, run func(ctx context.Context, w io.Writer, cfg config.Config, args []string) error) *cobra.Command {
	return configCommand(use, short, args, func(cmd *cobra.Command, cfg config.Config, a []string) error {
		ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
		defer cancel()
		return run(ctx, cmd.OutOrStdout(), cfg, a)
	})
}
