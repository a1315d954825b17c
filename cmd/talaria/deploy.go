package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/embedded"
	"github.com/talaria-agent/talaria/engine"
)

func newWorkerCommand() *cobra.Command {
	var common commonFlags
	c := &cobra.Command{
		Use:   "worker",
		Short: "Run a turn worker against an external Temporal and database",
		Long: `worker runs only the worker that executes turns, for a deployment of several
processes: point every worker (and scheduler, and client) at one Temporal
(--temporal-address or TEMPORAL_ADDRESS; TLS with TEMPORAL_TLS_CERT/KEY/CA,
TEMPORAL_API_KEY) and one database (--db postgres://... or TALARIA_DB). Workers
share the load; when one dies, its in-flight model calls and tool batches move to
another within heartbeat_timeout, and tool calls it had claimed but not finished
are reported to the model as "outcome unknown" instead of being run twice.
SIGINT or SIGTERM stop it cleanly.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := common.loadConfig()
			if err != nil {
				return err
			}
			if cfg.Temporal.Embedded() {
				return usagef("worker needs an external Temporal: set --temporal-address or TEMPORAL_ADDRESS (or run 'talaria serve')")
			}
			logger := newLogger(cfg.LogLevel)
			if !cfg.Model.Configured() {
				logger.Warn("turns will fail until a model is configured", "hint", engine.NoEndpointHelp)
			}
			rt, err := engine.Start(cmd.Context(), cfg, engine.Options{Worker: true, Logger: logger})
			if err != nil {
				return usageErr(err)
			}
			defer rt.Close()
			fmt.Fprintf(cmd.ErrOrStderr(), "talaria worker: ready (temporal %s, namespace %s, db %s)\n",
				cfg.Temporal.Address, cfg.Temporal.Namespace, redactDSN(cfg.DB))
			<-cmd.Context().Done()
			fmt.Fprintln(cmd.ErrOrStderr(), "talaria worker: shutting down")
			return nil
		},
	}
	common.register(c)
	return c
}

func newSchedulerCommand() *cobra.Command {
	var common commonFlags
	c := &cobra.Command{
		Use:   "scheduler",
		Short: "Run the cron scheduler against an external Temporal and database",
		Long: `scheduler runs only the cron tick: every minute it starts each due job's slot as a
workflow whose id is the job and the slot, so several schedulers (or a retried
tick) never run a slot twice, and missed slots are caught up after downtime as
each job's catch-up policy says. Point it at the deployment's Temporal
(TEMPORAL_ADDRESS) and database (TALARIA_DB); 'talaria serve' runs one itself.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := common.loadConfig()
			if err != nil {
				return err
			}
			if cfg.Temporal.Embedded() {
				return usagef("scheduler needs an external Temporal: set --temporal-address or TEMPORAL_ADDRESS (or run 'talaria serve')")
			}
			rt, err := engine.Start(cmd.Context(), cfg, engine.Options{Logger: newLogger(cfg.LogLevel)})
			if err != nil {
				return usageErr(err)
			}
			defer rt.Close()
			ticker, err := rt.StartScheduler(cmd.Context())
			if err != nil {
				return usageErr(err)
			}
			defer ticker.Stop(context.WithoutCancel(cmd.Context()))
			fmt.Fprintf(cmd.ErrOrStderr(), "talaria scheduler: ready (temporal %s)\n", cfg.Temporal.Address)
			<-cmd.Context().Done()
			fmt.Fprintln(cmd.ErrOrStderr(), "talaria scheduler: shutting down")
			return nil
		},
	}
	common.register(c)
	return c
}

func newTemporalCommand() *cobra.Command {
	var (
		common commonFlags
		port   int
		ip     string
	)
	c := &cobra.Command{
		Use:   "temporal",
		Short: "Run only the embedded Temporal server",
		Long: `temporal runs just the embedded Temporal server (SQLite file persistence under
$TALARIA_HOME/temporal) with its frontend on --ip:--temporal-port, so that
'talaria worker' processes and clients can share it without Docker. For
production, use a Temporal cluster instead (see docker-compose.yml).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := common.loadConfig()
			if err != nil {
				return err
			}
			lock, err := engine.TryLock(cfg.Home)
			if err != nil {
				return usagef("%s is in use by another talaria process", cfg.Home)
			}
			defer lock.Release()
			srv, err := embedded.Start(cmd.Context(), embedded.Options{
				DataDir: filepath.Join(cfg.Home, "temporal"), Namespace: cfg.Temporal.Namespace,
				IP: ip, Port: port, Logger: newLogger(cfg.LogLevel),
			})
			if err != nil {
				return usageErr(err)
			}
			defer srv.Stop()
			fmt.Fprintf(cmd.ErrOrStderr(), "talaria temporal: ready (frontend %s, namespace %s)\n", srv.HostPort(), srv.Namespace())
			<-cmd.Context().Done()
			fmt.Fprintln(cmd.ErrOrStderr(), "talaria temporal: shutting down")
			return nil
		},
	}
	common.register(c)
	c.Flags().IntVar(&port, "temporal-port", config.DefaultTemporalPort, "frontend gRPC port (0 picks a free one)")
	c.Flags().StringVar(&ip, "ip", "127.0.0.1", "frontend bind address")
	return c
}

// redactDSN hides a password in a database DSN for logs.
func redactDSN(dsn string) string {
	if !config.IsPostgres(dsn) {
		return dsn
	}
	return redactPassword(dsn)
}
