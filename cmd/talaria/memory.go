package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"
)

func newMemoryCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "memory",
		Short: "Show or edit the agent's memory (MEMORY.md, USER.md) and recall across sessions",
		Args:  noArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	var out outputFormat
	show := &cobra.Command{
		Use:   "show",
		Short: "Print the agent's notes and what it knows about the user, with their sizes",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON := out.json()
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			views, err := readMemoryFiles(cfg.Home)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), views)
			}
			printMemory(cmd.OutOrStdout(), views)
			return nil
		},
	}
	out.register(show)
	var user bool
	edit := &cobra.Command{
		Use:   "edit",
		Short: "Open MEMORY.md (or USER.md with --user) in $EDITOR",
		Long: `edit opens the agent's notes in $EDITOR (default vi; a command with arguments such
as "code -w" works). Entries are separated by a
line holding only §. The caps (2,200 characters for MEMORY.md, 1,375 for USER.md)
are enforced by the memory tool; 'talaria memory show' tells the sizes.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			name := talaria.MemoryFile
			if user {
				name = talaria.UserFile
			}
			path := filepath.Join(cfg.Home, talaria.MemoryDir, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return usageErr(err)
			}
			return runEditor(cmd.Context(), path)
		},
	}
	edit.Flags().BoolVar(&user, "user", false, "edit USER.md (facts about the user) instead of MEMORY.md")
	c.AddCommand(show, edit, newMemoryStatusCommand(), newMemorySearchCommand(), newMemoryRecallCommand(), newMemorySummarizeCommand())
	return c
}

// showEntry renders a memory entry as a list item. An entry that looks
// like a prompt injection (and so is left out of the system prompt) is
// marked, with its invisible characters made visible.
func showEntry(entry string) string {
	findings := talaria.ScanInjection(entry)
	if len(findings) == 0 {
		return "- " + entry
	}
	return fmt.Sprintf("- [not loaded: it looks like a prompt injection (%s)] %s", talaria.InjectionSummary(findings), talaria.MarkInvisible(entry))
}
