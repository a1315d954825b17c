package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/grpclog"

	"github.com/talaria-agent/talaria/config"
)

// The global flags: persistent flags of the root command, so they may come
// before or after the sub-command and no command rejects them.
const (
	flagTemporalAddress = "temporal-address"
	flagNamespace       = "namespace"
	flagDB              = "db"
	flagLogLevel        = "log-level"
)

// registerGlobalFlags adds the global flags to root.
func registerGlobalFlags(root *cobra.Command) {
	p := root.PersistentFlags()
	p.String(flagTemporalAddress, "", "external Temporal frontend host:port (env TEMPORAL_ADDRESS); empty embeds a server")
	p.String(flagNamespace, "", "Temporal namespace (env TEMPORAL_NAMESPACE, default \"default\")")
	p.String(flagDB, "", "database: a postgres:// DSN or a SQLite file path (env TALARIA_DB, default $TALARIA_HOME/talaria.db)")
	p.String(flagLogLevel, "", "log level: debug, info, warn, error (env TALARIA_LOG_LEVEL); logs go to $TALARIA_HOME/logs, debug shows everything on stderr too")
}

// overrides are the global flags given on c's command line: a flag given
// overrides even when empty (--db "" clears a configured value).
func overrides(c *cobra.Command) config.Overrides {
	given := func(name string) *string {
		if c == nil {
			return nil
		}
		fl := cmp.Or(c.Flags().Lookup(name), c.InheritedFlags().Lookup(name))
		if fl == nil || !fl.Changed {
			return nil
		}
		v := fl.Value.String()
		return &v
	}
	return config.Overrides{
		TemporalAddress: given(flagTemporalAddress),
		Namespace:       given(flagNamespace),
		DB:              given(flagDB),
		LogLevel:        given(flagLogLevel),
		UIPort:          uiPortOverride(c),
		MetricsListen:   given(flagMetricsListen),
		APIListen:       given(flagAPIListen),
	}
}

// loadConfig resolves $TALARIA_HOME, the configuration file and the
// environment, then the flags, and sets up the process's logs. A command
// that writes creates $TALARIA_HOME (checked writable); one that only
// reads (readOnlyCommands) creates nothing, and when what it would read
// does not exist yet it says so in one line.
func loadConfig(cmd *cobra.Command) (config.Config, error) {
	home, err := config.HomeDir(os.Getenv)
	if err != nil {
		return config.Config{}, usageErr(err)
	}
	need, readOnly := readOnlyCommands[commandPath(cmd)]
	if !readOnly {
		if err := talaria.EnsureHome(home); err != nil {
			return config.Config{}, usageErr(err)
		}
	}
	cfg, err := config.Resolve(home, os.Getenv, overrides(cmd))
	if err != nil {
		return cfg, usageErr(err)
	}
	if readOnly {
		if err := nothingYet(cfg, need); err != nil {
			if !need.lookup && need.store && wantsJSON(cmd) {
				empty := cmp.Or(need.empty, "[]")
				fmt.Fprintln(cmd.OutOrStdout(), empty) // an empty listing, for a program reading it
			}
			return cfg, err
		}
	}
	setupLogs(cmd, cfg, !readOnly)
	return cfg, nil
}

// commandPath is c's path below the root ("sessions list"); "" for nil.
func commandPath(c *cobra.Command) string {
	if c == nil {
		return ""
	}
	path := c.CommandPath()
	if i := strings.IndexByte(path, ' '); i >= 0 {
		return path[i+1:]
	}
	return ""
}

// readNeed is what a read-only command reads, to tell "nothing exists
// yet" from a problem.
type readNeed struct {
	// store: the database; temporal: a running serve (or an external
	// Temporal); home: files in $TALARIA_HOME.
	store, temporal, home bool
	// lookup: the command asks for one thing (exit 1 when nothing
	// exists); otherwise it lists (exit 0).
	lookup bool
	// empty is a listing's JSON when there is nothing ("" : []).
	empty string
}

// readOnlyCommands are the commands that only read: they never create
// $TALARIA_HOME, its database or its log directory. Every other command
// that loads the configuration may create them. config, model show, logs
// and version read without loadConfig and create nothing either.
var readOnlyCommands = map[string]readNeed{
	"status":          {temporal: true, lookup: true},
	"sessions list":   {store: true},
	"sessions show":   {store: true, lookup: true},
	"sessions search": {store: true},
	"cron list":       {store: true},
	"cron show":       {store: true, lookup: true},
	"cron runs":       {store: true, lookup: true},
	"cron output":     {store: true, lookup: true},
	"memory show":     {home: true},
	"usage":           {store: true, empty: emptyUsageJSON},
}

// nothingYet reports, as one line, that what a read-only command reads
// does not exist yet: $TALARIA_HOME does not, or (e.g. after 'talaria
// model set' made the home) its SQLite database does not and no serve
// names another one; nil when there is something to read. Opening the
// store would create and migrate an empty database.
func nothingYet(cfg config.Config, need readNeed) error {
	code := exitOK
	if need.lookup {
		code = exitFailure
	}
	if _, err := os.Stat(cfg.Home); !errors.Is(err, fs.ErrNotExist) {
		if need.store && !config.IsPostgres(cfg.DB) && !exists(cfg.DB) && !serveRuns(cfg.Home) {
			return &exitError{code: code, err: fmt.Errorf("nothing here yet: no database at %s ('talaria serve' or 'talaria chat' creates it)", cfg.DB)}
		}
		return nil
	}
	missing := need.home ||
		(need.temporal && cfg.Temporal.Embedded()) ||
		(need.store && !config.IsPostgres(cfg.DB) && !exists(cfg.DB))
	if !missing {
		return nil
	}
	return &exitError{code: code, err: fmt.Errorf("nothing here yet: TALARIA_HOME %s does not exist ('talaria serve' or 'talaria chat' creates it)", cfg.Home)}
}

// serveRuns says whether a serve has published its info for home (its
// database may be another than this shell's).
func serveRuns(home string) bool {
	_, err := talaria.ReadServeInfo(home)
	return err == nil
}

// wantsJSON says whether c was asked for JSON (-o json or --json).
func wantsJSON(c *cobra.Command) bool {
	if c == nil {
		return false
	}
	if f := c.Flags().Lookup("output"); f != nil && f.Value.String() == "json" {
		return true
	}
	f := c.Flags().Lookup("json")
	return f != nil && f.Value.String() == "true"
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// procLogs is this process's logging, set up once the configuration is
// known (see setupLogs); nil before.
var (
	procLogs   *talaria.Logs
	procMu     sync.Mutex
	grpcLogger sync.Once
)

// logKind names the log file of the process running c: serve, chat,
// worker, temporal and scheduler have their own, every other command
// shares cli.log.
func logKind(c *cobra.Command) string {
	switch p := commandPath(c); p {
	case "serve", "chat", "worker", "temporal", "scheduler":
		return p
	}
	return "cli"
}

// setupLogs routes this process's logs (see package logfile): Temporal's
// to $TALARIA_HOME/logs/KIND.log only, Talaria's own to that file and, one
// line each, to stderr; at debug level everything to stderr too. A
// command that only reads writes a log file only when the log directory
// exists already. gRPC's own logger and the default slog logger follow.
func setupLogs(c *cobra.Command, cfg config.Config, create bool) {
	var stderr io.Writer = os.Stderr
	if c != nil {
		stderr = c.ErrOrStderr()
	}
	logs, err := talaria.OpenLogs(talaria.LogOptions{
		Home: cfg.Home, Kind: logKind(c), Level: cfg.LogLevel, Terminal: stderr, CreateDir: create,
	})
	debug := talaria.ParseLogLevel(cfg.LogLevel) <= slog.LevelDebug
	procMu.Lock()
	old := procLogs
	procLogs = logs
	grpcOut = logs.Writer()
	if debug {
		grpcOut = io.MultiWriter(grpcOut, stderr)
	}
	procMu.Unlock()
	_ = old.Close()
	slog.SetDefault(logs.Logger)
	grpcLogger.Do(func() {
		w := writerFunc(func(p []byte) (int, error) {
			procMu.Lock()
			out := grpcOut
			procMu.Unlock()
			return out.Write(p)
		})
		grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, w, w))
	})
	if err != nil {
		logs.Logger.Warn("logs go to the terminal only", "error", err)
	}
}

// grpcOut is where gRPC's own warnings and errors go (the log file).
var grpcOut io.Writer = io.Discard

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// newLogger is the logger of this process: the one setupLogs made, or
// (before any configuration is loaded) one-line records on stderr at
// level.
func newLogger(level string) *slog.Logger {
	procMu.Lock()
	logs := procLogs
	procMu.Unlock()
	if logs != nil {
		return logs.Logger
	}
	plain, _ := talaria.OpenLogs(talaria.LogOptions{Level: level})
	return plain.Logger
}
