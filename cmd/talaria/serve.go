package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

func newServeCommand() *cobra.Command {
	var (
		port int
	)
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run the embedded Temporal server, the worker and the store",
		Long: `serve runs Talaria's long-lived process: an embedded Temporal server with SQLite
file persistence under $TALARIA_HOME/temporal (or a connection to an external
Temporal with --temporal-address), the worker that executes turns, the cron
scheduler (a tick every minute starting due jobs), and the store
($TALARIA_HOME/talaria.db, or --db). Turns in flight when it stops, however it
stops, resume when it starts again on the same $TALARIA_HOME.

serve checks its store every second. While the database does not answer (three
checks in a row), serve pauses: no new step of a turn starts and cron ticks are
skipped, but steps already running (a long build, a command) go on untouched.
It says so in one line, and in one line again when the store answers and work
resumes; turns wait meanwhile and go on. If its SQLite file is removed or
replaced, serve stops within a second with a failure status and never creates
the store again.

While it runs, 'talaria chat' from any directory with the same TALARIA_HOME
sends its turns here. SIGINT or SIGTERM shut it down cleanly.

` + apiHelp + "\n\n" + gatewayHelp + "\n\n" + uiHelp + "\n\n" + metricsHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			var portFlag *int
			if cmd.Flags().Changed("temporal-port") {
				cfg.Temporal.Port, portFlag = port, &port
			}
			if err := cfg.Validate(); err != nil {
				return usageErr(err)
			}
			// serve reloads config.yaml with the same flags applied.
			o := overrides(cmd)
			load := func() (config.Config, error) { return loadServe(cfg.Home, os.Getenv, o, portFlag) }
			return runServe(cmd, cfg, load)
		},
	}
	c.Flags().IntVar(&port, "temporal-port", config.DefaultTemporalPort, "embedded Temporal frontend port (0 picks a free one)")
	addUIPortFlag(c)
	addMetricsFlag(c)
	addPprofFlag(c)
	addAPIFlag(c, "")
	return c
}

func runServe(cmd *cobra.Command, cfg config.Config, load func() (config.Config, error)) error {
	ctx := cmd.Context()
	logger := newLogger(cfg.LogLevel)
	lock, err := talaria.TryLock(cfg.Home)
	if errors.Is(err, talaria.ErrLocked) {
		pid := ""
		if info, ierr := talaria.ReadServeInfo(cfg.Home); ierr == nil {
			pid = fmt.Sprintf(" (talaria serve, pid %d)", info.PID)
		}
		return usagef("%s is in use by another talaria process%s", cfg.Home, pid)
	}
	if err != nil {
		return usageErr(err)
	}
	defer lock.Release()

	// An API reachable beyond this machine needs a key: refused before
	// anything starts.
	if err := talaria.CheckListen(cfg.API.Listen, cfg.API.Key != ""); cfg.API.Listen != "" && err != nil {
		return usageErr(err)
	}
	if !cfg.Model.Configured() {
		fmt.Fprintf(cmd.ErrOrStderr(), "talaria serve: %s\n", talaria.NoEndpointHelp) // one line; serve starts anyway
	}
	if line, _ := talaria.SandboxLine(cfg); line != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "talaria serve: %s\n", line) // the sandbox in force, or why commands are refused
	}
	tel, err := startTelemetry(ctx, "serve", cfg, true)
	if err != nil {
		return usageErr(err)
	}
	defer tel.Close()
	prof, err := startPprof(cmd, cfg)
	if err != nil {
		return usageErr(err)
	}
	defer prof.Close()
	rt, err := talaria.Start(ctx, cfg, talaria.Options{Worker: true, EmbeddedPort: cfg.Temporal.Port, Logger: logger,
		Telemetry: tel.Telemetry()})
	if err != nil {
		return usageErr(err)
	}
	defer rt.Close()
	ui := startUI(ctx, cmd.ErrOrStderr(), "serve", cfg, rt.Server, "")
	defer ui.Close()

	address := cfg.Temporal.Address
	if rt.Server != nil {
		address = rt.Server.HostPort()
	}
	info := talaria.ServeInfo{
		PID: os.Getpid(), TemporalAddress: address, Namespace: cfg.Temporal.Namespace, DB: cfg.DB,
		StartedAt: time.Now().UTC(), Credential: rt.Server != nil, ModelEnv: modelEnv(os.Getenv),
		UI: uiLogin(ui),
	}.WithModel(rt.Models.Settings(), time.Now())
	if err := talaria.WriteServeInfo(cfg.Home, info); err != nil {
		return usageErr(err)
	}
	defer talaria.RemoveServeInfo(cfg.Home)
	// config.yaml changes reach new model calls without a restart.
	defer startReloader(ctx, cmd, cfg, load, rt, info)()
	ticker, err := rt.StartScheduler(ctx)
	if err != nil {
		return usageErr(err)
	}
	defer ticker.Stop(context.WithoutCancel(ctx))
	gw, err := startGateway(ctx, "serve", cfg, rt, cmd.ErrOrStderr(), true)
	if err != nil {
		return usageErr(err)
	}
	defer gw.Close()
	apiSrv, err := startAPI(cfg, rt, cmd.ErrOrStderr(), gw.webhooks())
	if err != nil {
		return usageErr(err)
	}
	defer apiSrv.Close()

	fmt.Fprintf(cmd.ErrOrStderr(), "talaria serve: ready (temporal %s, namespace %s, db %s, home %s%s)\n",
		address, cfg.Temporal.Namespace, redactDSN(cfg.DB), cfg.Home, tel.ready()+profilesReady(prof)+apiSrv.ready()+gw.readyLine()+uiReady(ui))
	if cfg.Model.Configured() {
		go warnIfUnreachable(ctx, cmd.ErrOrStderr(), cfg.Model.Endpoint(), cfg.Model.APIKey) // one line, if at all
	}
	// A store that stops answering pauses work (no new activity starts,
	// running ones go on, cron ticks are skipped) until it answers again;
	// a store gone stops serve. Each is one line here.
	return watchStore(ctx, cmd, rt, "serve")
}
