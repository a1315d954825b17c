package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

func newSkillsCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "skills",
		Short: "List, show, install and remove the agent's skills ($TALARIA_HOME/skills)",
		Long: `A skill is a procedure the agent keeps for a kind of task: a directory under
$TALARIA_HOME/skills with a SKILL.md (front matter with name, description and
version, then the steps) and supporting files. The system prompt lists them; the
agent reads one with skill_view and writes them with skill_manage.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(
		skillsCommand("list", "List the skills", noArgs, true, func(w io.Writer, cfg config.Config, _ []string, asJSON bool) error {
			list, err := talaria.ListSkills(cfg.Home)
			if err != nil {
				return err
			}
			if asJSON {
				if list == nil {
					list = []talaria.Skill{}
				}
				return writeJSON(w, list)
			}
			if len(list) == 0 {
				fmt.Fprintln(w, "no skills yet (the agent makes them with skill_manage; talaria skills install DIR adds one)")
			}
			for _, s := range list {
				version := ""
				if s.Version != "" {
					version = " (v" + s.Version + ")"
				}
				fmt.Fprintf(w, "%s%s — %s\n", s.Name, version, s.Description)
			}
			return nil
		}),
		skillsCommand("show NAME [FILE]", "Print a skill's SKILL.md, or one of its files", rangeArgs(1, 2, "a skill's name and optionally one of its files"), false,
			func(w io.Writer, cfg config.Config, args []string, _ bool) error {
				file := ""
				if len(args) == 2 {
					file = args[1]
				}
				text, err := talaria.ReadSkill(cfg.Home, args[0], file)
				if err != nil {
					return skillsErr(err)
				}
				fmt.Fprint(w, text)
				if !strings.HasSuffix(text, "\n") {
					fmt.Fprintln(w)
				}
				return nil
			}),
		skillsCommand("install DIR", "Install a skill from a directory holding its SKILL.md", exactArgs(1, "the skill's directory"), false,
			func(w io.Writer, cfg config.Config, args []string, _ bool) error {
				s, err := talaria.InstallSkill(cfg.Home, filepath.Clean(args[0]))
				if err != nil {
					return skillsErr(err)
				}
				fmt.Fprintf(w, "installed %s (%d supporting files) in %s\n", s.Name, len(s.Files), filepath.Join(talaria.SkillsDir(cfg.Home), s.Name))
				return nil
			}),
		skillsCommand("rm NAME", "Remove a skill and its files", exactArgs(1, "a skill's name"), false,
			func(w io.Writer, cfg config.Config, args []string, _ bool) error {
				if err := talaria.DeleteSkill(cfg.Home, args[0]); err != nil {
					return skillsErr(err)
				}
				fmt.Fprintf(w, "removed %s\n", args[0])
				return nil
			}),
	)
	return c
}

// skillsCommand builds a skills sub-command on the configuration's home;
// withOutput adds -o.
func skillsCommand(use, short string, args cobra.PositionalArgs, withOutput bool,
	run func(w io.Writer, cfg config.Config, args []string, asJSON bool) error) *cobra.Command {
	var out outputFormat
	c := configCommand(use, short, args, func(cmd *cobra.Command, cfg config.Config, a []string) error {
		asJSON := out.json()
		return run(cmd.OutOrStdout(), cfg, a, asJSON)
	})
	if withOutput {
		out.register(c)
	}
	return c
}

// configCommand builds a command that runs with the configuration loaded
// (and the global flags that choose it).
func configCommand(use, short string, args cobra.PositionalArgs, run func(cmd *cobra.Command, cfg config.Config, args []string) error) *cobra.Command {
	c := &cobra.Command{
		Use: use, Short: short, Args: args,
		RunE: func(cmd *cobra.Command, a []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			return run(cmd, cfg, a)
		},
	}
	return c
}

// skillsErr makes a refused skill a usage error (exit 2) and a missing
// one a failure (exit 1).
func skillsErr(err error) error {
	switch {
	case errors.Is(err, talaria.ErrNoSkill):
		return &exitError{code: exitFailure, err: err}
	case errors.Is(err, talaria.ErrSkillInvalid), errors.Is(err, talaria.ErrSkillSuspicious), errors.Is(err, talaria.ErrSkillExists):
		return usageErr(err)
	}
	return err
}
