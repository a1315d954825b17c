package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/injection"
	"github.com/talaria-agent/talaria/prompt"
)

func newMemoryCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "memory",
		Short: "Show or edit the agent's memory (MEMORY.md, USER.md)",
		Args:  noArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	var common commonFlags
	show := &cobra.Command{
		Use:   "show",
		Short: "Print the agent's notes and what it knows about the user, with their sizes",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := common.loadConfig()
			if err != nil {
				return err
			}
			for _, f := range []struct {
				title, name string
				limit       int
			}{{"Agent notes", prompt.MemoryFile, prompt.MemoryCap}, {"About the user", prompt.UserFile, prompt.UserCap}} {
				path := filepath.Join(cfg.Home, prompt.MemoryDir, f.name)
				data, err := os.ReadFile(path)
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("read %s: %w", path, err)
				}
				entries := prompt.SplitEntries(string(data))
				fmt.Fprintf(cmd.OutOrStdout(), "## %s (%s): %d entries, %d/%d characters\n", f.title, path, len(entries), utf8.RuneCount(data), f.limit)
				for _, e := range entries {
					fmt.Fprintln(cmd.OutOrStdout(), showEntry(e))
				}
				fmt.Fprintln(cmd.OutOrStdout())
			}
			return nil
		},
	}
	common.register(show)
	var editCommon commonFlags
	var user bool
	edit := &cobra.Command{
		Use:   "edit",
		Short: "Open MEMORY.md (or USER.md with --user) in $EDITOR",
		Long: `edit opens the agent's notes in $EDITOR (default vi). Entries are separated by a
line holding only §. The caps (2,200 characters for MEMORY.md, 1,375 for USER.md)
are enforced by the memory tool; 'talaria memory show' tells the sizes.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := editCommon.loadConfig()
			if err != nil {
				return err
			}
			name := prompt.MemoryFile
			if user {
				name = prompt.UserFile
			}
			path := filepath.Join(cfg.Home, prompt.MemoryDir, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return usageErr(err)
			}
			editor := os.Getenv("EDITOR")
			if editor == "" {
				editor = "vi"
			}
			run := exec.CommandContext(cmd.Context(), editor, path)
			run.Stdin, run.Stdout, run.Stderr = os.Stdin, os.Stdout, os.Stderr
			if err := run.Run(); err != nil {
				return fmt.Errorf("%s %s: %w", editor, path, err)
			}
			return nil
		},
	}
	editCommon.register(edit)
	edit.Flags().BoolVar(&user, "user", false, "edit USER.md (facts about the user) instead of MEMORY.md")
	c.AddCommand(show, edit)
	return c
}

// showEntry renders a memory entry as a list item. An entry that looks
// like a prompt injection (and so is left out of the system prompt) is
// marked, with its invisible characters made visible.
func showEntry(entry string) string {
	findings := injection.Scan(entry)
	if len(findings) == 0 {
		return "- " + entry
	}
	return fmt.Sprintf("- [not loaded: it looks like a prompt injection (%s)] %s", injection.Summary(findings), injection.Visible(entry))
}
