package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// flagUIPort is the Web UI's port flag of serve and temporal.
const flagUIPort = "ui-port"

// uiHelp is what --help says about the Web UI.
const uiHelp = `The embedded server's Temporal Web UI listens on --ui-port (config
temporal.ui_port, default 8233; 0 turns it off) on the frontend's IP. It shows
every turn (search by session: TalariaSessionId = "SESSION") and is read-only:
terminate, signal and reset are off ('talaria stop' and 'talaria steer' act on
turns). It admits only a browser that opened the URL with ?token=... printed on
the ready line ('talaria status SESSION' links serve's); the token is kept in
$TALARIA_HOME/tls/ui-token, readable by its owner only. With an external
Temporal (--temporal-address) there is no embedded UI: use that cluster's.`

// addUIPortFlag adds --ui-port to c.
func addUIPortFlag(c *cobra.Command) {
	c.Flags().Int(flagUIPort, config.DefaultUIPort,
		"Temporal Web UI port of the embedded server, on the frontend's IP (config temporal.ui_port; 0 turns it off; none with --temporal-address)")
}

// uiPortOverride is --ui-port when given on c's command line.
func uiPortOverride(c *cobra.Command) *int {
	if c == nil {
		return nil
	}
	fl := c.Flags().Lookup(flagUIPort)
	if fl == nil || !fl.Changed {
		return nil
	}
	v, err := c.Flags().GetInt(flagUIPort)
	if err != nil {
		return nil
	}
	return &v
}

// startUI serves the Web UI of srv as cfg says. It returns nil when there
// is none: no embedded server, the UI turned off, or it cannot start (its
// port is taken), which warn says in one line; the server runs on.
// ip is the address to listen on ("": the frontend's).
func startUI(ctx context.Context, warn io.Writer, name string, cfg config.Config, srv *talaria.EmbeddedServer, ip string) *talaria.UI {
	if srv == nil || cfg.Temporal.UIPort == 0 {
		return nil
	}
	token, err := talaria.UIToken(cfg.Home)
	if err == nil {
		var ui *talaria.UI
		ui, err = srv.StartUI(ctx, talaria.UIOptions{IP: ip, Port: cfg.Temporal.UIPort, Token: token, Logger: newLogger(cfg.LogLevel)})
		if err == nil {
			if w := ui.Warning(); w != "" {
				fmt.Fprintf(warn, "talaria %s: warning: %s\n", name, w)
			}
			return ui
		}
	}
	hint := "set --ui-port or temporal.ui_port (0 turns it off)"
	if errors.Is(err, talaria.ErrUIPortUnavailable) {
		err = fmt.Errorf("port %d is in use or not allowed", cfg.Temporal.UIPort)
	}
	fmt.Fprintf(warn, "talaria %s: web UI off: %v; %s\n", name, err, hint)
	return nil
}

// uiReady is the ready line's mention of ui ("" when there is none).
func uiReady(ui *talaria.UI) string {
	if ui == nil {
		return ""
	}
	return ", web UI " + ui.LoginURL()
}

// uiLogin is ui's login URL for serve.json ("" when there is none).
func uiLogin(ui *talaria.UI) string {
	if ui == nil {
		return ""
	}
	return ui.LoginURL()
}
