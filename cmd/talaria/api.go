package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/talaria-agent/talaria/config"
)

// flagAPIListen is the API's address flag of serve and api.
const flagAPIListen = "api-listen"

// defaultAPIListen is where 'talaria api' listens when nothing says.
const defaultAPIListen = "127.0.0.1:8642"

// apiHelp is what --help says about the API.
const apiHelp = `With --api-listen ADDR (config api.listen, env TALARIA_API_LISTEN; off by
default) it serves the HTTP API at http://ADDR: OpenAI-compatible
/v1/chat/completions, /v1/responses and /v1/models, durable runs with live
events (/v1/runs), /api/sessions, /api/jobs, and a web chat page at /. Every
route but /health asks for the key (Authorization: Bearer KEY): api.key or
TALARIA_API_KEY, else a key made and kept in $TALARIA_HOME/tls/api-key, which
only a loopback address may use (on a terminal, the ready line links the page
with it). See docs/api.md.`

// addAPIFlag adds --api-listen to c.
func addAPIFlag(c *cobra.Command, def string) {
	c.Flags().String(flagAPIListen, def,
		"serve the HTTP API and web page at http://ADDR (host:port, e.g. 127.0.0.1:8642; config api.listen, env TALARIA_API_LISTEN; empty: off)")
}

// startAPI serves the API cfg asks for (api.listen) on rt; nil when it
// asks for none. An address beyond loopback without api.key, or one it
// cannot listen on, is an error in one line.
func startAPI(cfg config.Config, rt *talaria.Runtime, stderr io.Writer, webhooks http.Handler) (*apiServer, error) {
	listen := cfg.API.Listen
	if listen == "" {
		return nil, nil
	}
	if err := talaria.CheckListen(listen, cfg.API.Key != ""); err != nil {
		return nil, err
	}
	key, generated := cfg.API.Key, false
	if key == "" {
		k, err := talaria.APIKey(cfg.Home)
		if err != nil {
			return nil, err
		}
		key, generated = k, true
	}
	workdir := cfg.API.Workdir
	if workdir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("the API's working directory: %w", err)
		}
		workdir = wd
	}
	srv, err := talaria.NewAPI(talaria.APIOptions{Runtime: rt, Config: cfg, Key: key, Workdir: workdir, Logger: newLogger(cfg.LogLevel),
		Webhooks: webhooks})
	if err != nil {
		return nil, err
	}
	if err := srv.Listen(listen); err != nil {
		if errors.Is(err, talaria.ErrAPIListen) {
			return nil, fmt.Errorf("%w (set --%s or api.listen to a free address)", err, flagAPIListen)
		}
		return nil, err
	}
	a := &apiServer{srv: srv, page: srv.URL() + "/"}
	switch {
	case generated && writesToTerminal(stderr):
		// The owner's own terminal: the page's link carries the key in
		// its fragment, which the browser never sends.
		a.page += "#key=" + key
	case generated:
		// A log file or journal may be read by others: name the file.
		a.page += " (key in " + talaria.APIKeyPath(cfg.Home) + ")"
	}
	return a, nil
}

// apiServer is a running API and the page's link for the ready line.
type apiServer struct {
	srv  *talaria.APIServer
	page string
}

// ready is the API's part of the ready line.
func (a *apiServer) ready() string {
	if a == nil {
		return ""
	}
	return ", api " + a.page
}

// Close stops the API.
func (a *apiServer) Close() {
	if a != nil {
		a.srv.Close()
	}
}

func newAPICommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "api",
		Short: "Run only the HTTP API, against a running serve or an external Temporal",
		Long: `api serves Talaria's HTTP API alone, so it can run and scale apart from the
workers: against the 'talaria serve' of the same $TALARIA_HOME, or against an
external Temporal (--temporal-address or TEMPORAL_ADDRESS) and database (--db or
TALARIA_DB) shared with the workers. Several api processes may serve the same
deployment: the API keeps no state of its own. It listens on --api-listen
(default ` + defaultAPIListen + `). SIGINT or SIGTERM stop it; runs go on.

` + apiHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			cfg.API.Listen = cmp.Or(cfg.API.Listen, defaultAPIListen)
			if err := talaria.CheckListen(cfg.API.Listen, cfg.API.Key != ""); err != nil {
				return usageErr(err)
			}
			rt, err := connectClient(cmd.Context(), cfg, newLogger(cfg.LogLevel))
			if err != nil {
				return err
			}
			defer rt.Close()
			// The platforms whose messages come by webhook are answered
			// here, where their requests arrive; no platform is polled.
			gw, err := startGateway(cmd.Context(), "api", cfg, rt, cmd.ErrOrStderr(), false)
			if err != nil {
				return usageErr(err)
			}
			defer gw.Close()
			a, err := startAPI(cfg, rt, cmd.ErrOrStderr(), gw.webhooks())
			if err != nil {
				return usageErr(err)
			}
			defer a.Close()
			fmt.Fprintf(cmd.ErrOrStderr(), "talaria api: ready (temporal %s, db %s%s%s)\n",
				rt.Config.Temporal.Address, redactDSN(cfg.DB), a.ready(), gw.readyLine())
			<-cmd.Context().Done()
			return nil
		},
	}
	addAPIFlag(c, "")
	return c
}

// writesToTerminal reports whether w is a terminal.
func writesToTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
