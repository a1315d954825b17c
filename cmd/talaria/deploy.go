package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

func newWorkerCommand() *cobra.Command {
	return daemonCommand("worker", "Run a turn worker against an external Temporal and database",
		`worker runs only the worker that executes turns, for a deployment of several
processes: point every worker (and scheduler, and client) at one Temporal
(--temporal-address or TEMPORAL_ADDRESS; TLS with Temporal's standard
TEMPORAL_TLS_CLIENT_CERT_PATH/CLIENT_KEY_PATH/SERVER_CA_CERT_PATH, TEMPORAL_API_KEY) and one database (--db postgres://... or TALARIA_DB). Workers
share the load; when one dies, its in-flight model calls and tool batches move to
another within heartbeat_timeout, and tool calls it had claimed but not finished
are reported to the model as "outcome unknown" instead of being run twice.

It checks its store every second, as serve does: while the database does not
answer (three checks in a row) it stops taking work and says so, and takes work
again when it answers; if its SQLite file is removed or replaced, it stops
with a failure status. SIGINT or SIGTERM stop it cleanly.`, talaria.Options{Worker: true}, nil)
}

func newSchedulerCommand() *cobra.Command {
	return daemonCommand("scheduler", "Run the cron scheduler against an external Temporal and database",
		`scheduler runs only the cron tick: every minute it starts each due job's slot as a
workflow whose id is the job and the slot, so several schedulers (or a retried
tick) never run a slot twice, and missed slots are caught up after downtime as
each job's catch-up policy says. Point it at the deployment's Temporal
(TEMPORAL_ADDRESS) and database (TALARIA_DB); 'talaria serve' runs one itself.

It checks its store every second, as serve does: while the database does not
answer (three checks in a row) it skips its ticks and says so; if its SQLite
file is removed or replaced, it stops with a failure status.`, talaria.Options{},
		func(cmd *cobra.Command, rt *talaria.Runtime) (func(), error) {
			ticker, err := rt.StartScheduler(cmd.Context())
			if err != nil {
				return nil, err
			}
			return func() { _ = ticker.Stop(context.WithoutCancel(cmd.Context())) }, nil
		})
}

// daemonCommand builds a process of a multi-process deployment: it connects
// to the external Temporal and the database, runs until SIGINT or SIGTERM,
// and starts extra (if any) once connected.
func daemonCommand(name, short, long string, opts talaria.Options,
	extra func(*cobra.Command, *talaria.Runtime) (stop func(), err error)) *cobra.Command {
	c := &cobra.Command{
		Use: name, Short: short, Long: long + "\n\n" + metricsHelp, Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if cfg.Temporal.Embedded() {
				return usagef("%s needs an external Temporal: set --temporal-address or TEMPORAL_ADDRESS (or run 'talaria serve')", name)
			}
			logger := newLogger(cfg.LogLevel)
			if opts.Worker && !cfg.Model.Configured() {
				logger.Warn("turns will fail until a model is configured", "hint", talaria.NoEndpointHelp)
			}
			if opts.Worker {
				if line, _ := talaria.SandboxLine(cfg); line != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "talaria %s: %s\n", name, line)
				}
			}
			opts.Logger = logger
			tel, err := startTelemetry(cmd.Context(), name, cfg, true)
			if err != nil {
				return usageErr(err)
			}
			defer tel.Close()
			prof, err := startPprof(cmd, cfg)
			if err != nil {
				return usageErr(err)
			}
			defer prof.Close()
			opts.Telemetry = tel.Telemetry()
			rt, err := talaria.Start(cmd.Context(), cfg, opts)
			if err != nil {
				return usageErr(err)
			}
			defer rt.Close()
			if extra != nil {
				stop, err := extra(cmd, rt)
				if err != nil {
					return usageErr(err)
				}
				defer stop()
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "talaria %s: ready (temporal %s, namespace %s, db %s%s)\n",
				name, cfg.Temporal.Address, cfg.Temporal.Namespace, redactDSN(cfg.DB), tel.ready()+profilesReady(prof))
			// The store is watched as serve watches it: an unreachable
			// database pauses work, a removed or replaced SQLite file
			// stops this process (exit status 1).
			return watchStore(cmd.Context(), cmd, rt, name)
		},
	}
	addMetricsFlag(c)
	addPprofFlag(c)
	return c
}

func newTemporalCommand() *cobra.Command {
	var (
		port       int
		ip         string
		temporalDB string
	)
	c := &cobra.Command{
		Use:   "temporal",
		Short: "Run only the embedded Temporal server",
		Long: `temporal runs just the embedded Temporal server (SQLite file persistence under
$TALARIA_HOME/temporal) with its frontend on --ip:--temporal-port, so that
'talaria worker' processes and clients can share it without Docker. For
production, use a Temporal cluster instead (see docker-compose.yml), or keep
this server's state in PostgreSQL with --temporal-db postgres://.../temporal:
it uses that database and temporal_visibility beside it (the name with
"_visibility" appended), creating both and Temporal's schema when absent and
upgrading an older schema at start.

Every port of the server requires mutual TLS with the credential kept in
$TALARIA_HOME/tls/talaria.pem (made at the first start, readable by its owner
only). Processes on the same $TALARIA_HOME use it by themselves; give it to
others with TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH and
TEMPORAL_TLS_SERVER_CA_CERT_PATH all set to that file and
TEMPORAL_TLS_SERVER_NAME=localhost (the older TEMPORAL_TLS_CERT/KEY/CA still work).

` + uiHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			lock, err := talaria.TryLock(cfg.Home)
			if err != nil {
				return usagef("%s is in use by another talaria process", cfg.Home)
			}
			defer lock.Release()
			cred, err := talaria.EnsureCredential(cfg.Home)
			if err != nil {
				return usageErr(err)
			}
			temporalDB = cmp.Or(temporalDB, os.Getenv(envTemporalDB))
			if temporalDB != "" && !config.IsPostgres(temporalDB) {
				return usagef("--temporal-db (or %s) takes a postgres:// URL", envTemporalDB)
			}
			tel, err := startTelemetry(cmd.Context(), "temporal", cfg, false)
			if err != nil {
				return usageErr(err)
			}
			defer tel.Close()
			srv, err := talaria.StartEmbedded(cmd.Context(), talaria.EmbeddedOptions{
				DataDir: filepath.Join(cfg.Home, "temporal"), Namespace: cfg.Temporal.Namespace, Postgres: temporalDB,
				IP: ip, Port: port, Logger: newLogger(cfg.LogLevel), TLS: cred,
				SearchAttributes: talaria.SearchAttributes(),
				Meter:            tel.Telemetry().Meter(talaria.ScopeServer),
			})
			if err != nil {
				return usageErr(err)
			}
			defer srv.Stop()
			state := "SQLite under " + filepath.Join(cfg.Home, "temporal")
			if temporalDB != "" {
				state = "PostgreSQL " + redactDSN(temporalDB)
			}
			ui := startUI(cmd.Context(), cmd.ErrOrStderr(), "temporal", cfg, srv, ip)
			defer ui.Close()
			fmt.Fprintf(cmd.ErrOrStderr(), "talaria temporal: ready (frontend %s, namespace %s, state in %s, clients present the credential %s%s)\n",
				srv.HostPort(), srv.Namespace(), state, talaria.CredentialPath(cfg.Home), tel.ready()+uiReady(ui))
			<-cmd.Context().Done()
			fmt.Fprintln(cmd.ErrOrStderr(), "talaria temporal: shutting down")
			return nil
		},
	}
	c.Flags().IntVar(&port, "temporal-port", config.DefaultTemporalPort, "frontend gRPC port (0 picks a free one)")
	c.Flags().StringVar(&ip, "ip", "127.0.0.1", "frontend bind address")
	addUIPortFlag(c)
	addMetricsFlag(c)
	c.Flags().StringVar(&temporalDB, "temporal-db", "", "keep Temporal's state in this PostgreSQL database (postgres://...) instead of SQLite under $TALARIA_HOME/temporal; "+envTemporalDB+" also sets it and keeps a password out of the process list")
	return c
}

// envTemporalDB is read by 'talaria temporal' when --temporal-db is not given.
const envTemporalDB = "TALARIA_TEMPORAL_DB"

// redactDSN hides a password in a database DSN for logs.
func redactDSN(dsn string) string {
	if !config.IsPostgres(dsn) {
		return dsn
	}
	return redactPassword(dsn)
}
