package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
)

// TestTurnTemplateCarriesCompaction: the turns chat and send start compact
// as the configuration says.
func TestTurnTemplateCarriesCompaction(t *testing.T) {
	cfg := config.Default(t.TempDir())
	cfg.Compression.ContextWindow = 20000
	in := engine.TurnTemplate(cfg, t.TempDir())
	if in.Compaction != engine.CompactionFor(cfg) || in.Compaction.Threshold == 0 || in.Compaction.OverflowAttempts != 3 {
		t.Fatalf("turn template compaction = %+v", in.Compaction)
	}
}

// TestReadOnlyCommandsExist: every command the read-only table names is a
// command of talaria (a rename would silently make it create the home).
func TestReadOnlyCommandsExist(t *testing.T) {
	root := newRootCommand()
	for path := range readOnlyCommands {
		c, rest, err := root.Find(strings.Fields(path))
		if err != nil || len(rest) > 0 || commandPath(c) != path {
			t.Errorf("read-only command %q is not a talaria command (found %q, rest %v, %v)", path, commandPath(c), rest, err)
		}
	}
}

// TestGlobalFlagsAnywhere: the global flags are accepted before or after
// any command, and a flag given empty is an override that clears.
func TestGlobalFlagsAnywhere(t *testing.T) {
	cases := []struct {
		args []string
		db   *string
	}{
		{[]string{"--db", "/x.db", "config"}, ptr("/x.db")},
		{[]string{"config", "--db", "/x.db"}, ptr("/x.db")},
		{[]string{"config", "--db", ""}, ptr("")},
		{[]string{"config", "--log-level", "debug"}, nil},
		{[]string{"--log-level", "debug", "version"}, nil},
		{[]string{"version", "--namespace", "n", "--temporal-address", "h:1"}, nil},
		{[]string{"logs", "--db", "/x.db"}, ptr("/x.db")},
	}
	for _, c := range cases {
		root := newRootCommand()
		var got config.Overrides
		var ran bool
		leaf, _, err := root.Find(c.args)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		leaf.RunE = func(cmd *cobra.Command, _ []string) error { ran, got = true, overrides(cmd); return nil }
		leaf.Run = nil
		root.SetArgs(c.args)
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&bytes.Buffer{})
		if err := root.Execute(); err != nil || !ran {
			t.Fatalf("%v: ran %v, %v", c.args, ran, err)
		}
		if (got.DB == nil) != (c.db == nil) || (got.DB != nil && *got.DB != *c.db) {
			t.Errorf("%v: --db override %v, want %v", c.args, deref(got.DB), deref(c.db))
		}
	}
}

func ptr(s string) *string { return &s }

func deref(s *string) string {
	if s == nil {
		return "<not given>"
	}
	return strconv.Quote(*s)
}

func TestLogKind(t *testing.T) {
	root := newRootCommand()
	for path, want := range map[string]string{"serve": "serve", "chat": "chat", "worker": "worker", "temporal": "temporal",
		"scheduler": "scheduler", "status": "cli", "cron add": "cli", "sessions list": "cli"} {
		c, _, err := root.Find(strings.Fields(path))
		if err != nil {
			t.Fatal(err)
		}
		if got := logKind(c); got != want {
			t.Errorf("logKind(%s) = %q, want %q", path, got, want)
		}
	}
}

// TestNothingYet: a read-only command on a home that does not exist says
// so (exit 0 for a listing, 1 for a look-up) unless what it reads lives
// elsewhere.
func TestNothingYet(t *testing.T) {
	absent := filepath.Join(t.TempDir(), "absent")
	elsewhere := filepath.Join(t.TempDir(), "x.db")
	if err := os.WriteFile(elsewhere, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		need readNeed
		cfg  func(*config.Config)
		code int // -1: no error
	}{
		{"listing", readNeed{store: true}, nil, exitOK},
		{"look-up", readNeed{store: true, lookup: true}, nil, exitFailure},
		{"postgres store", readNeed{store: true}, func(c *config.Config) { c.DB = "postgres://u@h/db" }, -1},
		{"sqlite store elsewhere", readNeed{store: true}, func(c *config.Config) { c.DB = elsewhere }, -1},
		{"external temporal", readNeed{temporal: true, lookup: true}, func(c *config.Config) { c.Temporal.Address = "t:7233" }, -1},
		{"embedded temporal", readNeed{temporal: true, lookup: true}, nil, exitFailure},
		{"home files", readNeed{home: true}, nil, exitOK},
	}
	for _, c := range cases {
		cfg := config.Default(absent)
		if c.cfg != nil {
			c.cfg(&cfg)
		}
		err := nothingYet(cfg, c.need)
		var ex *exitError
		switch {
		case c.code < 0 && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.code >= 0 && (!errors.As(err, &ex) || ex.code != c.code || !strings.Contains(err.Error(), "does not exist")):
			t.Errorf("%s: %v, want exit %d", c.name, err, c.code)
		}
	}
	if _, err := os.Stat(absent); !os.IsNotExist(err) {
		t.Fatalf("the home was created: %v", err)
	}
	// A home without its database (made by 'model set'): a listing of the
	// store is empty and creates no database; home files are read.
	home := t.TempDir()
	cfg := config.Default(home)
	var ex *exitError
	if err := nothingYet(cfg, readNeed{store: true}); !errors.As(err, &ex) || ex.code != exitOK || !strings.Contains(err.Error(), "no database at") {
		t.Errorf("home without a database: %v", err)
	}
	if err := nothingYet(cfg, readNeed{store: true, lookup: true}); !errors.As(err, &ex) || ex.code != exitFailure {
		t.Errorf("look-up in a home without a database: %v", err)
	}
	if err := nothingYet(cfg, readNeed{home: true}); err != nil {
		t.Errorf("home files in an existing home: %v", err)
	}
	if _, err := os.Stat(cfg.DB); !os.IsNotExist(err) {
		t.Fatalf("the database was created: %v", err)
	}
}
