package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// toolView is one tool as `talaria tools` shows it.
type toolView struct {
	Name       string `json:"name"`
	Toolset    string `json:"toolset"`
	Approval   string `json:"approval"`
	Quick      bool   `json:"quick"`
	Idempotent bool   `json:"idempotent"`
	Enabled    bool   `json:"enabled"`
	// Note says why a tool the lists allow is not offered.
	Note string `json:"note,omitempty"`
}

func newToolsCommand() *cobra.Command {
	var out outputFormat
	c := &cobra.Command{
		Use:   "tools",
		Short: "List the agent's tools, their toolsets and what they may do without asking",
		Long: `tools lists every tool, built-in and from the MCP servers of mcp_servers (each
reached to ask; one that cannot be is said on stderr): its toolset (a name that stands for its tools in
tools.enabled, tools.disabled, chat --tools and cron --tools), what it may do
without asking, whether it runs inside the workflow task (quick) and whether a
retry may run it again (idempotent; otherwise a call interrupted by a crash is
answered "outcome unknown"), and whether this configuration offers it (a tool
that needs a service, such as web_search, says what to set when none is).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON := out.json()
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			list, err := talaria.ToolCatalog(cfg)
			if err != nil {
				return usageErr(err)
			}
			views := make([]toolView, len(list))
			for i, t := range list {
				views[i] = toolView{Name: t.Tool.Name(), Toolset: talaria.ToolsetOf(t.Tool.Name()), Approval: talaria.ApprovalOf(t.Tool.Name()),
					Quick: talaria.IsQuick(t.Tool), Idempotent: t.Tool.Idempotent(), Enabled: t.Enabled, Note: t.Note}
			}
			views = append(views, mcpToolViews(cmd, cfg)...)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), views)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(w, "TOOL\tTOOLSET\tOFFERED\tRUNS\tON RETRY\tLIMITS")
			for _, v := range views {
				runs, retry, offered := "activity", "outcome unknown", "yes"
				if v.Quick {
					runs = "quick"
				}
				if v.Idempotent {
					retry = "runs again"
				}
				if !v.Enabled {
					offered = "no"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", v.Name, v.Toolset, offered, runs, retry, v.Approval)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			for _, v := range views {
				if v.Note != "" {
					fmt.Fprintf(cmd.OutOrStdout(), "\n%s is not offered: %s\n", v.Name, v.Note)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "\ntoolsets: %s\n", strings.Join(talaria.ToolsetNames(), ", "))
			return nil
		},
	}
	out.register(c)
	return c
}

// mcpToolViews reaches the configured MCP servers and lists their tools;
// a server that cannot be reached is said on stderr and left out.
func mcpToolViews(cmd *cobra.Command, cfg config.Config) []toolView {
	if len(cfg.MCPServers) == 0 {
		return nil
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "reaching %d MCP server(s)…\n", len(cfg.MCPServers))
	servers := talaria.NewMCP(cfg.MCPServers, talaria.ToolPolicy(cfg), nil)
	defer servers.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
	defer cancel()
	var out []toolView
	for _, name := range servers.Names() {
		list, err := servers.ServerTools(ctx, name)
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "MCP server %s: %s\n", name, oneLine(err))
			continue
		}
		for _, t := range list {
			n := talaria.MCPToolName(name, t.Name)
			out = append(out, toolView{Name: n, Toolset: "mcp:" + name, Approval: "the MCP server's own",
				Enabled: !slices.Contains(cfg.Tools.Disabled, n)})
		}
	}
	return out
}
