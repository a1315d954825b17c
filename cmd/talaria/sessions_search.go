package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"
)

func newSessionsSearchCommand() *cobra.Command {
	var limit, around int
	var out outputFormat
	return storeCommand("search QUERY", "Full-text search over every session's messages, grouped by conversation",
		func(c *cobra.Command, args []string) error {
			if len(args) == 0 || strings.TrimSpace(strings.Join(args, " ")) == "" {
				return usagef("%s needs the words to look for (see '%s --help')", c.CommandPath(), c.CommandPath())
			}
			return nil
		},
		func(c *cobra.Command) {
			c.Long = "Search every session's messages for the words of QUERY (SQLite FTS5 or PostgreSQL full-text search;\n" +
				"no model is involved). A message matches when it holds every word, in any order and any case;\n" +
				"words in double quotes must follow each other as written:\n" +
				"  talaria sessions search finished plan         both words, anywhere in a message\n" +
				"  talaria sessions search '\"finished plan\"'     the phrase\n" +
				"Hits are grouped by conversation: a session and the sessions compaction\n" +
				"continued it in count once, newest first, each hit with the messages around it."
			c.Flags().IntVarP(&limit, "limit", "n", 10, "at most this many hits")
			c.Flags().IntVar(&around, "around", 1, "messages of context on each side of a hit")
			out.register(c)
		},
		func(cmd *cobra.Command, st *talaria.Store, args []string) error {
			asJSON := out.json()
			if limit < 1 || around < 0 {
				return usagef("--limit must be at least 1 and --around not negative")
			}
			// The operator's search: every session, chats' included.
			groups, err := st.SearchMessages(cmd.Context(), talaria.Scope{}, strings.Join(args, " "), limit, around)
			if err != nil {
				return err
			}
			views := talaria.NewSearchGroups(groups)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), views)
			}
			printSearch(cmd.OutOrStdout(), views)
			return nil
		})
}

// printSearch prints search results: per conversation its sessions, then
// each hit ("»") between its neighbours.
func printSearch(w io.Writer, groups []talaria.SearchGroup) {
	if len(groups) == 0 {
		fmt.Fprintln(w, "no matches")
		return
	}
	for i, g := range groups {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "conversation %s (sessions with hits: %s)\n", g.LineageID, strings.Join(g.SessionIDs, ", "))
		for _, h := range g.Hits {
			fmt.Fprintf(w, "  session %s, message %d\n", h.Message.SessionID, h.Message.ID)
			for _, m := range h.Before {
				fmt.Fprintf(w, "      %s: %s\n", m.Role, oneLineText(m.Content, 160))
			}
			fmt.Fprintf(w, "    » %s: %s\n", h.Message.Role, oneLineText(h.Message.Content, 300))
			for _, m := range h.After {
				fmt.Fprintf(w, "      %s: %s\n", m.Role, oneLineText(m.Content, 160))
			}
		}
	}
}
