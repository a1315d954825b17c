package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"
)

func newUsageCommand() *cobra.Command {
	var out outputFormat
	var session, since string
	c := &cobra.Command{
		Use:   "usage",
		Short: "Show the tokens and cost of model calls, by model",
		Long: `usage sums the model calls recorded in the database (every turn's calls, compaction
summaries, goal judgements, session summaries and the auxiliary model's questions for
recall) by provider and model: calls, input tokens (and how
many of them were read from or written to a prompt cache), output tokens and cost in
US dollars at the models' prices (the bundled table, discovered prices, or models:/prices:
in config.yaml). A model without a known price counts its tokens and no cost.

  talaria usage                      everything recorded
  talaria usage --since 7d           the last seven days (units: s, m, h, d, w)
  talaria usage --session ID -o json one session, as JSON`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON := out.json()
			f := talaria.UsageFilter{SessionID: strings.TrimSpace(session)}
			if since != "" {
				d, err := parseSince(since)
				if err != nil {
					return usageErr(err)
				}
				f.Since = time.Now().Add(-d)
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			st, err := openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer st.Close()
			rows, err := st.Usage(cmd.Context(), f)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), usageReport{Rows: nonNil(rows), Total: sumUsage(rows)})
			}
			printUsage(cmd.OutOrStdout(), rows)
			return nil
		},
	}
	out.register(c)
	c.Flags().StringVar(&session, "session", "", "only this session's calls")
	c.Flags().StringVar(&since, "since", "", "only calls this recent: 90m, 24h, 7d, 2w")
	return c
}

// emptyUsageJSON is usage -o json when nothing is recorded yet (no
// database): the report of no calls.
const emptyUsageJSON = `{"models":[],"total":{"provider":"all","model":"all","calls":0,"prompt_tokens":0,` +
	`"completion_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"cost_usd":0,"unpriced_calls":0}}`

// usageReport is usage -o json.
type usageReport struct {
	Rows  []talaria.UsageRow `json:"models"`
	Total talaria.UsageRow   `json:"total"`
}

func nonNil(rows []talaria.UsageRow) []talaria.UsageRow {
	if rows == nil {
		return []talaria.UsageRow{}
	}
	return rows
}

// maxSince bounds a look-back (a hundred years: everything).
const maxSince = 100 * 365 * 24 * time.Hour

// parseSince reads a look-back: a Go duration or a number of days (d) or
// weeks (w). Pure.
func parseSince(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	unit := time.Duration(0)
	switch {
	case strings.HasSuffix(s, "d"):
		unit = 24 * time.Hour
	case strings.HasSuffix(s, "w"):
		unit = 7 * 24 * time.Hour
	}
	if unit > 0 {
		n, err := strconv.ParseFloat(strings.TrimSpace(s[:len(s)-1]), 64)
		if err == nil && n > 0 && n*float64(unit) < float64(maxSince) {
			return time.Duration(n * float64(unit)), nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, fmt.Errorf("--since %q is not a positive duration (like 90m, 24h, 7d or 2w)", s)
}

// sumUsage is the total of rows. Pure.
func sumUsage(rows []talaria.UsageRow) talaria.UsageRow {
	t := talaria.UsageRow{Provider: "all", Model: "all"}
	for _, r := range rows {
		t.Calls += r.Calls
		t.PromptTokens += r.PromptTokens
		t.CompletionTokens += r.CompletionTokens
		t.CacheReadTokens += r.CacheReadTokens
		t.CacheWriteTokens += r.CacheWriteTokens
		t.CostUSD += r.CostUSD
		t.Unpriced += r.Unpriced
	}
	return t
}

// printUsage writes the usage table, with a total line.
func printUsage(w io.Writer, rows []talaria.UsageRow) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no model calls recorded")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tMODEL\tCALLS\tINPUT\tCACHE READ\tCACHE WRITE\tOUTPUT\tCOST")
	for _, r := range append(rows, sumUsage(rows)) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", r.Provider, r.Model, r.Calls, r.PromptTokens,
			r.CacheReadTokens, r.CacheWriteTokens, r.CompletionTokens, costText(r))
	}
	_ = tw.Flush()
}

// costText is a row's cost in dollars, saying when some calls had no
// price. Pure.
func costText(r talaria.UsageRow) string {
	text := talaria.FormatUSD(r.CostUSD)
	switch {
	case r.Unpriced == r.Calls && r.Calls > 0:
		return "unknown (no price)"
	case r.Unpriced > 0:
		return fmt.Sprintf("%s (+%d calls without a price)", text, r.Unpriced)
	}
	return text
}
