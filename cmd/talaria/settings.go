package main

import (
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/engine"
)

// commonFlags are the flags serve and chat share.
type commonFlags struct {
	temporalAddress string
	namespace       string
	db              string
	logLevel        string
}

func (f *commonFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&f.temporalAddress, "temporal-address", "", "external Temporal frontend host:port (env TEMPORAL_ADDRESS); empty embeds a server")
	c.Flags().StringVar(&f.namespace, "namespace", "", "Temporal namespace (env TEMPORAL_NAMESPACE, default \"default\")")
	c.Flags().StringVar(&f.db, "db", "", "database: a postgres:// DSN or a SQLite file path (env TALARIA_DB, default $TALARIA_HOME/talaria.db)")
	c.Flags().StringVar(&f.logLevel, "log-level", "", "log level on stderr: debug, info, warn, error (env TALARIA_LOG_LEVEL)")
}

// loadConfig resolves $TALARIA_HOME (created and checked writable), the
// configuration file and environment, then the flags.
func (f *commonFlags) loadConfig() (config.Config, error) {
	home, err := config.HomeDir(os.Getenv)
	if err != nil {
		return config.Config{}, usageErr(err)
	}
	if err := engine.EnsureHome(home); err != nil {
		return config.Config{}, usageErr(err)
	}
	cfg, err := config.Load(home, os.Getenv)
	if err != nil {
		return cfg, usageErr(err)
	}
	if f.temporalAddress != "" {
		cfg.Temporal.Address = f.temporalAddress
	}
	if f.namespace != "" {
		cfg.Temporal.Namespace = f.namespace
	}
	if f.db != "" {
		cfg.DB = f.db
	}
	if f.logLevel != "" {
		cfg.LogLevel = f.logLevel
	}
	if err := cfg.Normalize(); err != nil {
		return cfg, usageErr(err)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageErr(err)
	}
	return cfg, nil
}

// newLogger logs to stderr at the configured level.
func newLogger(level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}
