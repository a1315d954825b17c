package embedded

import (
	"bytes"
	"cmp"
	"context"
	"crypto/md5" // #nosec G501 -- a checksum of a schema manifest for the update log, as Temporal's own tool writes it
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for pingPostgres
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/common/persistence"
	tsql "go.temporal.io/server/common/persistence/sql"
	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	pgplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	"go.temporal.io/server/common/resolver"
	serverschema "go.temporal.io/server/schema"
	pgschema "go.temporal.io/server/schema/postgresql/v12"
)

// ErrPostgres reports that the PostgreSQL persistence cannot be used: a bad
// DSN, an unreachable server, or a schema that cannot be brought up to date.
var ErrPostgres = errors.New("embedded: PostgreSQL persistence unusable")

const (
	// visibilityStoreName names the second data store of PostgreSQL mode.
	visibilityStoreName = "postgres-visibility"
	// visibilitySuffix turns the main database's name into the visibility
	// database's, as Temporal's own set-up names them (temporal,
	// temporal_visibility).
	visibilitySuffix = "_visibility"
	// defaultPostgresDB is the database used when the DSN names none.
	defaultPostgresDB = "temporal"
	// Connection pools, as Temporal's own container configures them: the
	// main store's, and the visibility store's. Each pool is per database
	// handle, so one server holds a few of them; bounded, they stay well
	// within PostgreSQL's default max_connections (100).
	mainMaxConns       = 20
	visibilityMaxConns = 10
	maxConnLifetime    = time.Hour
	// Embedded schema trees (go.temporal.io/server/schema).
	mainSchemaDir       = "postgresql/v12/temporal"
	visibilitySchemaDir = "postgresql/v12/visibility"
)

// persistenceConfig is the server's persistence: in file mode the SQLite
// file DBFileName and the visibility file VisibilityFileName, each with its
// own connection; with Options.Postgres the main PostgreSQL database and its
// visibility database; when Ephemeral one memory database for everything.
func persistenceConfig(o Options, main *config.SQL) config.Persistence {
	p := config.Persistence{
		DefaultStore:     storeName,
		VisibilityStore:  storeName,
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{storeName: {SQL: main}},
	}
	if o.Postgres != "" && main != nil {
		p.VisibilityStore = visibilityStoreName
		p.DataStores[visibilityStoreName] = config.DataStore{SQL: visibilityConfig(main)}
	} else if !o.Ephemeral && main != nil {
		p.VisibilityStore = sqliteVisibilityStoreName
		p.DataStores[sqliteVisibilityStoreName] = config.DataStore{SQL: sqliteVisibilityConfig(main)}
	}
	return p
}

// postgresConfig turns a postgres:// DSN into the server's SQL settings:
// host and port (default 5432), user, password, database (default
// "temporal") and every query parameter (sslmode, search_path...) as a
// connection attribute. The pgx driver is used, as by Talaria's own store.
func postgresConfig(dsn string) (*config.SQL, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: DSN is not a URL", ErrPostgres)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, fmt.Errorf("%w: DSN must start with postgres:// (got %q)", ErrPostgres, u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("%w: DSN names no host", ErrPostgres)
	}
	port := cmp.Or(u.Port(), "5432")
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("%w: DSN port %q is not a port", ErrPostgres, port)
	}
	db := cmp.Or(strings.TrimPrefix(u.Path, "/"), defaultPostgresDB)
	if err := checkDatabaseName(db); err != nil {
		return nil, err
	}
	cfg := &config.SQL{
		PluginName:        pgplugin.PluginNamePGX,
		DatabaseName:      db,
		ConnectAddr:       net.JoinHostPort(host, port),
		ConnectProtocol:   "tcp",
		ConnectAttributes: map[string]string{},
		MaxConns:          mainMaxConns,
		MaxIdleConns:      mainMaxConns,
		MaxConnLifetime:   maxConnLifetime,
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Password, _ = u.User.Password()
	}
	for k, vs := range u.Query() {
		if len(vs) > 0 {
			cfg.ConnectAttributes[k] = vs[len(vs)-1]
		}
	}
	return cfg, nil
}

// checkDatabaseName refuses names the server would have to quote in ways
// its statements do not (CREATE DATABASE "name"), and over-long ones.
func checkDatabaseName(name string) error {
	if len(name)+len(visibilitySuffix) > 63 {
		return fmt.Errorf("%w: database name %q is too long (PostgreSQL keeps 63 bytes, with %q appended for visibility)",
			ErrPostgres, name, visibilitySuffix)
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("%w: database name %q: use letters, digits, '_' and '-' only", ErrPostgres, name)
		}
	}
	return nil
}

// visibilityConfig is main's settings for the visibility database.
func visibilityConfig(main *config.SQL) *config.SQL {
	v := *main
	v.DatabaseName = main.DatabaseName + visibilitySuffix
	v.ConnectAttributes = maps.Clone(main.ConnectAttributes)
	v.MaxConns, v.MaxIdleConns = visibilityMaxConns, visibilityMaxConns
	return &v
}

// preparePostgres makes sure both databases exist, takes the main
// database's server lock (see lockPostgres), and brings both schemas to the
// version this server expects, as Temporal's SQL tool does (create,
// setup-schema -v 0.0, update-schema on the versioned directory). It returns
// the main store's settings and the lock, to release when the server stops.
func preparePostgres(ctx context.Context, o Options) (*config.SQL, *pgLock, error) {
	if o.Ephemeral {
		return nil, nil, fmt.Errorf("%w: Postgres and Ephemeral exclude each other", ErrInvalidOptions)
	}
	main, err := postgresConfig(o.Postgres)
	if err != nil {
		return nil, nil, err
	}
	stores := []struct {
		cfg    *config.SQL
		dir    string
		target string
	}{
		{main, mainSchemaDir, pgschema.Version},
		{visibilityConfig(main), visibilitySchemaDir, pgschema.VisibilityVersion},
	}
	for _, st := range stores {
		admin := *st.cfg
		admin.ConnectAttributes = maps.Clone(st.cfg.ConnectAttributes)
		if err := ensurePostgresDatabase(&admin, st.cfg.DatabaseName); err != nil {
			// The database may exist and the role may only lack access to
			// the default one; what follows says so if it really is missing.
			o.Logger.LogAttrs(ctx, slog.LevelDebug, "create temporal database",
				slog.String("database", st.cfg.DatabaseName), slog.String("error", err.Error()))
		}
	}
	// Locked before the schema changes, so that two servers started at
	// once do not both migrate.
	lock, err := lockPostgres(ctx, main)
	if err != nil {
		return nil, nil, err
	}
	for _, st := range stores {
		from, to, err := migratePostgres(st.cfg, st.dir, st.target)
		if err != nil {
			// The server's driver reports a failed connection without its
			// cause; asking once more directly names it.
			if cause := pingPostgres(ctx, st.cfg); cause != nil {
				err = fmt.Errorf("cannot connect: %w", cause)
			}
			return nil, nil, errors.Join(fmt.Errorf("%w: database %s at %s: %w",
				ErrPostgres, st.cfg.DatabaseName, st.cfg.ConnectAddr, err), lock.release())
		}
		if from != to {
			o.Logger.LogAttrs(ctx, slog.LevelInfo, "temporal schema updated",
				slog.String("database", st.cfg.DatabaseName), slog.String("from", from), slog.String("to", to))
		}
	}
	return main, lock, nil
}

// serverLockKey names, among the advisory locks of the main database, the
// one a server holds while it runs ("talaria-" as a number).
const serverLockKey int64 = 0x74616c617269612d

// pgLock is a session-level advisory lock on the main database, held on a
// connection of its own for as long as the server runs. A single-node server
// owns every history shard; a second one on the same database (from another
// $TALARIA_HOME, which the data directory's lock cannot see) would take them
// from the first in turn, so it is refused. If PostgreSQL drops the
// connection, the lock goes with it: it guards against a mistake, not a
// determined second server.
type pgLock struct {
	db   *sql.DB
	conn *sql.Conn
}

// lockPostgres takes the server lock of cfg's database, or fails at once
// with ErrPostgres when another server holds it.
func lockPostgres(ctx context.Context, cfg *config.SQL) (*pgLock, error) {
	db, err := sql.Open("pgx", pgxDSN(cfg))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPostgres, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fail := func(err error) error {
		return fmt.Errorf("%w: database %s at %s: cannot connect: %s", ErrPostgres, cfg.DatabaseName, cfg.ConnectAddr, scrub(err, cfg.Password))
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, errors.Join(fail(err), db.Close())
	}
	var got bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, serverLockKey).Scan(&got); err != nil {
		return nil, errors.Join(fail(err), conn.Close(), db.Close())
	}
	if !got {
		return nil, errors.Join(fmt.Errorf("%w: database %s at %s is in use by another Temporal server (one talaria temporal per database)",
			ErrPostgres, cfg.DatabaseName, cfg.ConnectAddr), conn.Close(), db.Close())
	}
	return &pgLock{db: db, conn: conn}, nil
}

// release drops the lock (by closing its connection). Nil-safe.
func (l *pgLock) release() error {
	if l == nil {
		return nil
	}
	return errors.Join(l.conn.Close(), l.db.Close())
}

// pgxDSN is cfg as a URL for the pgx database/sql driver.
func pgxDSN(cfg *config.SQL) string {
	u := url.URL{Scheme: "postgres", Host: cfg.ConnectAddr, Path: "/" + cfg.DatabaseName}
	if cfg.User != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	}
	q := url.Values{}
	for k, v := range cfg.ConnectAttributes {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// pingPostgres connects to cfg's database once, through pgx, and returns
// why that fails (nil when it works). The error names the user, host and
// database, never the password.
func pingPostgres(ctx context.Context, cfg *config.SQL) error {
	db, err := sql.Open("pgx", pgxDSN(cfg))
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		return errors.New(scrub(err, cfg.Password))
	}
	return nil
}

// scrub is err's text without password (a driver's error names the user,
// host and database, but this makes sure).
func scrub(err error, password string) string {
	msg := err.Error()
	if password != "" {
		msg = strings.ReplaceAll(msg, password, "xxxxx")
	}
	return msg
}

// ensurePostgresDatabase creates name, connected to the server's default
// database (cfg.DatabaseName is cleared); an existing one is left as is.
func ensurePostgresDatabase(cfg *config.SQL, name string) error {
	cfg.DatabaseName = ""
	db, err := tsql.NewSQLAdminDB(sqlplugin.DbKindUnknown, cfg, resolver.NewNoopResolver(), log.NewNoopLogger(), metrics.NoopMetricsHandler)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	return db.CreateDatabase(name)
}

// manifest is a versioned schema directory's manifest.json.
type manifest struct {
	CurrVersion          string
	MinCompatibleVersion string
	Description          string
	SchemaUpdateCqlFiles []string
	AllowNoCqlFiles      bool
}

// migratePostgres brings the database's schema from its recorded version
// (none: 0.0) to target, applying each versioned directory of dir in order
// and recording each step. It returns the versions before and after.
func migratePostgres(cfg *config.SQL, dir, target string) (from, to string, err error) {
	db, err := tsql.NewSQLAdminDB(sqlplugin.DbKindUnknown, cfg, resolver.NewNoopResolver(), log.NewNoopLogger(), metrics.NoopMetricsHandler)
	if err != nil {
		return "", "", err
	}
	defer func() { _ = db.Close() }()
	if err := db.CreateSchemaVersionTables(); err != nil {
		return "", "", fmt.Errorf("create schema version tables: %w", err)
	}
	current, err := db.ReadSchemaVersion(cfg.DatabaseName)
	if errors.Is(err, sql.ErrNoRows) || err == nil && current == "" {
		current, err = "0.0", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("read schema version: %w", err)
	}
	assets := serverschema.Assets()
	entries, err := fs.ReadDir(assets, path.Join(dir, "versioned"))
	if err != nil {
		return current, current, fmt.Errorf("embedded schema %s: %w", dir, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	steps, err := pendingVersions(names, current, target)
	if err != nil {
		return current, current, err
	}
	version := current
	for _, step := range steps {
		m, stmts, err := readVersion(assets, path.Join(dir, "versioned", step))
		if err != nil {
			return current, version, err
		}
		for _, stmt := range stmts {
			if err := db.Exec(stmt); err != nil {
				return current, version, fmt.Errorf("schema %s: %w", m.CurrVersion, err)
			}
		}
		if err := db.UpdateSchemaVersion(cfg.DatabaseName, m.CurrVersion, m.MinCompatibleVersion); err != nil {
			return current, version, fmt.Errorf("record schema version %s: %w", m.CurrVersion, err)
		}
		if err := db.WriteSchemaUpdateLog(version, m.CurrVersion, m.checksum(), m.Description); err != nil {
			return current, version, fmt.Errorf("record schema update %s: %w", m.CurrVersion, err)
		}
		version = m.CurrVersion
	}
	return current, version, nil
}

// readVersion reads one versioned directory: its manifest and statements.
func readVersion(assets fs.FS, dir string) (manifest, []string, error) {
	var m manifest
	data, err := fs.ReadFile(assets, path.Join(dir, "manifest.json"))
	if err != nil {
		return m, nil, fmt.Errorf("embedded schema %s: %w", dir, err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, nil, fmt.Errorf("embedded schema %s: manifest: %w", dir, err)
	}
	var stmts []string
	for _, file := range m.SchemaUpdateCqlFiles {
		body, err := fs.ReadFile(assets, path.Join(dir, file))
		if err != nil {
			return m, nil, fmt.Errorf("embedded schema %s: %w", dir, err)
		}
		s, err := persistence.LoadAndSplitQueryFromReaders([]io.Reader{bytes.NewReader(body)})
		if err != nil {
			return m, nil, fmt.Errorf("embedded schema %s/%s: %w", dir, file, err)
		}
		stmts = append(stmts, s...)
	}
	if len(stmts) == 0 && !m.AllowNoCqlFiles {
		return m, nil, fmt.Errorf("embedded schema %s: no statements", dir)
	}
	return m, stmts, nil
}

func (m manifest) checksum() string {
	data, _ := json.Marshal(m)
	sum := md5.Sum(data) // #nosec G401 -- not a security use
	return hex.EncodeToString(sum[:])
}

// schemaVersion is a "major.minor" schema version.
type schemaVersion struct{ major, minor int }

func parseSchemaVersion(s string) (schemaVersion, error) {
	s = strings.TrimPrefix(s, "v")
	major, minor, ok := strings.Cut(s, ".")
	if !ok {
		minor = "0"
	}
	a, err1 := strconv.Atoi(major)
	b, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil || a < 0 || b < 0 {
		return schemaVersion{}, fmt.Errorf("schema version %q is not major.minor", s)
	}
	return schemaVersion{a, b}, nil
}

func (v schemaVersion) compare(w schemaVersion) int {
	if v.major != w.major {
		return v.major - w.major
	}
	return v.minor - w.minor
}

// pendingVersions picks, from the versioned directory names (v1.0, v1.1,
// ...), those above current and up to target, in order. A database whose
// schema is newer than target belongs to a newer server: refused.
func pendingVersions(dirs []string, current, target string) ([]string, error) {
	cur, err := parseSchemaVersion(current)
	if err != nil {
		return nil, err
	}
	tgt, err := parseSchemaVersion(target)
	if err != nil {
		return nil, err
	}
	if cur.compare(tgt) > 0 {
		return nil, fmt.Errorf("schema version %s is newer than this server's %s: run the matching talaria version", current, target)
	}
	type step struct {
		name string
		v    schemaVersion
	}
	var steps []step
	for _, d := range dirs {
		v, err := parseSchemaVersion(d)
		if err != nil {
			continue
		}
		if v.compare(cur) > 0 && v.compare(tgt) <= 0 {
			steps = append(steps, step{d, v})
		}
	}
	slices.SortFunc(steps, func(a, b step) int { return a.v.compare(b.v) })
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.name
	}
	if cur.compare(tgt) < 0 && (len(steps) == 0 || steps[len(steps)-1].v.compare(tgt) != 0) {
		return nil, fmt.Errorf("no schema step reaches version %s", target)
	}
	return out, nil
}
