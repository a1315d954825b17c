package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/talaria-agent/talaria/internal/textline"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// gatewayStatus is one platform account in `talaria gateway status`.
type gatewayStatus struct {
	Platform     string     `json:"platform"`
	Account      string     `json:"account"`
	Holder       string     `json:"holder"`
	ExpiresAt    time.Time  `json:"expires_at"`
	Live         bool       `json:"live"`
	LastUpdateAt *time.Time `json:"last_update_at,omitempty"`
	LastUpdateID string     `json:"last_update_id,omitempty"`
	LastError    string     `json:"last_error,omitempty"`
	// InFlight counts the messages taken and not answered yet.
	InFlight int `json:"in_flight"`
}

func newGatewayStatusCommand() *cobra.Command {
	var out outputFormat
	c := controlCommand("status", "Which process takes each platform's updates", `status lists the platform accounts a gateway took updates for: the process
holding each one's lease (host/pid/id), until when, whether that holder is live
(it renews every 5 s; a lease not renewed for 20 s goes to another gateway),
when it last took an update, why its polling fails, when it does, and how many
messages it took are not answered yet (queued behind a turn, running, or being
sent). With -o json, one JSON array.`, 0,
		func(c *cobra.Command) { out.register(c) },
		func(cmd *cobra.Command, cfg config.Config, rt *talaria.Runtime, _ []string) error {
			asJSON := out.json()
			leases, err := rt.Store.Leases(cmd.Context(), "gateway/")
			if err != nil {
				return err
			}
			inFlight, err := talaria.InFlight(cmd.Context(), rt.Client, cfg.Temporal.Namespace)
			if err != nil {
				return err
			}
			now := time.Now()
			list := make([]gatewayStatus, 0, len(leases))
			for _, l := range leases {
				parts := strings.SplitN(strings.TrimPrefix(l.Name, "gateway/"), "/", 2)
				st := gatewayStatus{Platform: parts[0], Holder: l.Holder, ExpiresAt: l.ExpiresAt, Live: l.ExpiresAt.After(now),
					LastUpdateAt: l.LastUpdateAt, LastUpdateID: l.LastUpdateID, LastError: l.LastError}
				if len(parts) == 2 {
					st.Account = parts[1]
				}
				st.InFlight = inFlight[st.Platform+"/"+st.Account]
				list = append(list, st)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			if len(list) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no gateway has taken a platform's updates yet")
				return nil
			}
			for _, s := range list {
				state := "live"
				if !s.Live {
					state = "expired: no gateway takes its updates now"
				}
				line := fmt.Sprintf("%s %s: %s until %s (%s)", s.Platform, s.Account, textline.Visible(s.Holder),
					s.ExpiresAt.Local().Format("15:04:05"), state)
				if s.LastUpdateAt != nil {
					line += fmt.Sprintf("; last update %s ago", now.Sub(*s.LastUpdateAt).Round(time.Second))
				}
				line += fmt.Sprintf("; messages in flight: %d", s.InFlight)
				if s.LastError != "" {
					line += "; polling fails: " + textline.Visible(s.LastError)
				}
				fmt.Fprintln(cmd.OutOrStdout(), line)
			}
			return nil
		})
	c.Args = noArgs
	return c
}
