package embedded

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/config"
	pgschema "go.temporal.io/server/schema/postgresql/v12"

	"github.com/talaria-agent/talaria/internal/pgtest"
)

func TestPostgresConfig(t *testing.T) {
	tests := []struct {
		dsn                  string
		addr, db, user, pass string
		attrs                map[string]string
		wantErr              string
	}{
		{dsn: "postgres://temporal:s%40cret@db:5433/temporal?sslmode=disable", addr: "db:5433", db: "temporal",
			user: "temporal", pass: "s@cret", attrs: map[string]string{"sslmode": "disable"}},
		{dsn: "postgresql://u@127.0.0.1/", addr: "127.0.0.1:5432", db: "temporal", user: "u", attrs: map[string]string{}},
		{dsn: "postgres://[::1]:6000/t-1?search_path=x&sslmode=require", addr: "[::1]:6000", db: "t-1",
			attrs: map[string]string{"search_path": "x", "sslmode": "require"}},
		{dsn: "mysql://u@h/db", wantErr: "postgres://"},
		{dsn: "postgres:///db", wantErr: "no host"},
		{dsn: "postgres://h:99999/db", wantErr: "not a port"},
		{dsn: `postgres://h/a"b`, wantErr: "letters, digits"},
		{dsn: "postgres://h/" + strings.Repeat("x", 60), wantErr: "too long"},
	}
	for _, tt := range tests {
		t.Run(tt.dsn, func(t *testing.T) {
			cfg, err := postgresConfig(tt.dsn)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrPostgres) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want ErrPostgres with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ConnectAddr != tt.addr || cfg.DatabaseName != tt.db || cfg.User != tt.user || cfg.Password != tt.pass {
				t.Fatalf("got addr %q db %q user %q pass %q", cfg.ConnectAddr, cfg.DatabaseName, cfg.User, cfg.Password)
			}
			if len(cfg.ConnectAttributes) != len(tt.attrs) {
				t.Fatalf("attributes %v, want %v", cfg.ConnectAttributes, tt.attrs)
			}
			for k, v := range tt.attrs {
				if cfg.ConnectAttributes[k] != v {
					t.Fatalf("attributes %v, want %v", cfg.ConnectAttributes, tt.attrs)
				}
			}
			vis := visibilityConfig(cfg)
			if vis.DatabaseName != tt.db+"_visibility" || cfg.DatabaseName != tt.db {
				t.Fatalf("visibility database %q (main %q)", vis.DatabaseName, cfg.DatabaseName)
			}
		})
	}
}

func TestPendingVersions(t *testing.T) {
	dirs := []string{"v1.0", "v1.1", "v1.10", "v1.2", "v1.9", "README", "v2.0"}
	tests := []struct {
		current, target string
		want            []string
		wantErr         string
	}{
		{current: "0.0", target: "1.10", want: []string{"v1.0", "v1.1", "v1.2", "v1.9", "v1.10"}},
		{current: "1.2", target: "1.10", want: []string{"v1.9", "v1.10"}},
		{current: "1.10", target: "1.10", want: []string{}},
		{current: "1.9", target: "2.0", want: []string{"v1.10", "v2.0"}},
		{current: "2.0", target: "1.10", wantErr: "newer than this server's"},
		{current: "0.0", target: "1.11", wantErr: "no schema step reaches"},
		{current: "x", target: "1.10", wantErr: "not major.minor"},
	}
	for _, tt := range tests {
		got, err := pendingVersions(dirs, tt.current, tt.target)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s -> %s: err = %v, want %q", tt.current, tt.target, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s -> %s: got %v %v, want %v", tt.current, tt.target, got, err, tt.want)
		}
	}
}

func TestPersistenceConfig(t *testing.T) {
	main, err := postgresConfig("postgres://u@h/temporal")
	if err != nil {
		t.Fatal(err)
	}
	p := persistenceConfig(Options{Postgres: "postgres://u@h/temporal"}, main)
	if p.DefaultStore == p.VisibilityStore || p.DataStores[p.VisibilityStore].SQL.DatabaseName != "temporal_visibility" ||
		p.DataStores[p.DefaultStore].SQL.DatabaseName != "temporal" {
		t.Fatalf("postgres persistence: %+v", p)
	}
	lite := persistenceConfig(Options{}, &config.SQL{DatabaseName: "/d%3f/" + DBFileName})
	if lite.DefaultStore == lite.VisibilityStore || lite.DataStores[lite.VisibilityStore].SQL.DatabaseName != "/d%3f/"+VisibilityFileName {
		t.Fatalf("SQLite persistence: %+v", lite)
	}
	mem := persistenceConfig(Options{Ephemeral: true}, &config.SQL{DatabaseName: "talaria-x"})
	if mem.DefaultStore != mem.VisibilityStore || len(mem.DataStores) != 1 {
		t.Fatalf("memory persistence: %+v", mem)
	}
}

// schemaVersionOf reads the version Temporal's schema_version table records.
func schemaVersionOf(t *testing.T, dsn, db string) string {
	t.Helper()
	u, _ := url.Parse(dsn)
	u.Path = "/" + db
	conn, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var v string
	if err := conn.QueryRow(`SELECT curr_version FROM schema_version WHERE db_name = $1`, db).Scan(&v); err != nil {
		t.Fatalf("schema version of %s: %v", db, err)
	}
	return v
}

// TestPostgresPersistence: a server on a PostgreSQL database that does not
// exist yet creates it and its visibility database with the current schema,
// runs a workflow, and after a restart on the same databases finds the
// workflow's result and the workflow in its visibility records; no SQLite
// file is made.
func TestPostgresPersistence(t *testing.T) {
	dsn, name := pgtest.TemporalDatabase(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	s1, err := Start(ctx, Options{DataDir: dir, Postgres: dsn})
	if err != nil {
		t.Fatalf("start on PostgreSQL: %v", err)
	}
	t.Cleanup(func() { _ = s1.Stop() })
	if got := schemaVersionOf(t, dsn, name); got != pgschema.Version {
		t.Fatalf("main schema version %s, want %s", got, pgschema.Version)
	}
	if got := schemaVersionOf(t, dsn, name+"_visibility"); got != pgschema.VisibilityVersion {
		t.Fatalf("visibility schema version %s, want %s", got, pgschema.VisibilityVersion)
	}
	c1 := dial(t, s1)
	w1 := startWorker(t, c1)
	run, err := c1.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "pg-echo", TaskQueue: testTaskQueue}, echoWorkflow, "hi")
	if err != nil {
		t.Fatalf("start workflow: %v", err)
	}
	var out string
	if err := run.Get(ctx, &out); err != nil || out != "hi!" {
		t.Fatalf("result %q %v", out, err)
	}
	w1.Stop()
	c1.Close()
	if err := s1.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}

	s2, err := Start(ctx, Options{DataDir: dir, Postgres: dsn})
	if err != nil {
		t.Fatalf("restart on the same databases: %v", err)
	}
	t.Cleanup(func() { _ = s2.Stop() })
	c2 := dial(t, s2)
	if err := c2.GetWorkflow(ctx, "pg-echo", run.GetRunID()).Get(ctx, &out); err != nil || out != "hi!" {
		t.Fatalf("result after restart %q %v", out, err)
	}
	waitFor := time.Now().Add(30 * time.Second)
	for {
		resp, err := c2.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: s2.Namespace(), Query: "WorkflowId = 'pg-echo'"})
		if err == nil && len(resp.GetExecutions()) == 1 {
			break
		}
		if time.Now().After(waitFor) {
			t.Fatalf("visibility never listed the workflow (last error %v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, DBFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a SQLite file was made beside PostgreSQL: %v", err)
	}
}

func TestPostgresRefusals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := Start(ctx, Options{Ephemeral: true, Postgres: "postgres://u@127.0.0.1/x"}); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("Ephemeral with Postgres: err = %v", err)
	}
	// Nothing listens on port 1: the error says which database, at once.
	_, err := Start(ctx, Options{DataDir: t.TempDir(), Postgres: "postgres://u:hunter2@127.0.0.1:1/temporal?connect_timeout=2"})
	if err != nil && strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("the error shows the password: %v", err)
	}
	if !errors.Is(err, ErrPostgres) || !strings.Contains(err.Error(), "temporal at 127.0.0.1:1") ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("unreachable server: err = %v", err)
	}
}

// TestPostgresSchemaUpgrade: a database left at an older schema (as an
// older server made it) is brought up to this server's version at start,
// one recorded step at a time; one whose schema is newer than this server
// knows is refused with a clear error and left untouched.
func TestPostgresSchemaUpgrade(t *testing.T) {
	dsn, name := pgtest.TemporalDatabase(t)
	main, err := postgresConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	admin := *main
	if err := ensurePostgresDatabase(&admin, name); err != nil {
		t.Fatal(err)
	}
	if from, to, err := migratePostgres(main, mainSchemaDir, "1.10"); err != nil || from != "0.0" || to != "1.10" {
		t.Fatalf("migrate to 1.10: %s -> %s, %v", from, to, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{DataDir: t.TempDir(), Postgres: dsn})
	if err != nil {
		t.Fatalf("start on a 1.10 schema: %v", err)
	}
	if got := schemaVersionOf(t, dsn, name); got != pgschema.Version {
		t.Fatalf("schema version after start %s, want %s", got, pgschema.Version)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(dsn)
	conn, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var steps int
	if err := conn.QueryRow(`SELECT count(*) FROM schema_update_history`).Scan(&steps); err != nil || steps < 10 {
		t.Fatalf("schema_update_history has %d steps (%v), want one per version", steps, err)
	}
	if _, err := conn.Exec(`UPDATE schema_version SET curr_version = '9.0' WHERE db_name = $1`, name); err != nil {
		t.Fatal(err)
	}
	_, err = Start(ctx, Options{DataDir: t.TempDir(), Postgres: dsn})
	if !errors.Is(err, ErrPostgres) || !strings.Contains(err.Error(), "newer than this server's") {
		t.Fatalf("start on a newer schema: err = %v", err)
	}
	if got := schemaVersionOf(t, dsn, name); got != "9.0" {
		t.Fatalf("the newer schema was changed to %s", got)
	}
}

// TestPostgresOneServerPerDatabase: a second server on the same database,
// from another data directory (which the directory lock cannot see), is
// refused while the first runs and starts once it has stopped.
func TestPostgresOneServerPerDatabase(t *testing.T) {
	dsn, _ := pgtest.TemporalDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s1, err := Start(ctx, Options{DataDir: t.TempDir(), Postgres: dsn})
	if err != nil {
		t.Fatalf("first server: %v", err)
	}
	t.Cleanup(func() { _ = s1.Stop() })
	s2, err := Start(ctx, Options{DataDir: t.TempDir(), Postgres: dsn})
	if !errors.Is(err, ErrPostgres) || !strings.Contains(err.Error(), "in use by another Temporal server") {
		if s2 != nil {
			_ = s2.Stop()
		}
		t.Fatalf("second server on the same database: err = %v", err)
	}
	if err := s1.Stop(); err != nil {
		t.Fatal(err)
	}
	s3, err := Start(ctx, Options{DataDir: t.TempDir(), Postgres: dsn})
	if err != nil {
		t.Fatalf("after the first stopped: %v", err)
	}
	if err := s3.Stop(); err != nil {
		t.Fatal(err)
	}
}
