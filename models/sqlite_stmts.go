package models

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"unicode"

	moderncsqlite "modernc.org/sqlite"
)

// stmtCacheSize bounds the statements one SQLite connection keeps
// prepared. The store runs a few dozen distinct statements; an IN list's
// length makes a statement of its own, so the bound is what keeps a
// connection's cache from growing with them.
const stmtCacheSize = 96

// stmtCachingConnector opens SQLite connections that keep their recent
// statements prepared (stmtCachingConn): parsing a statement costs as much
// as running most of the store's queries, and the store runs the same ones
// over and over.
type stmtCachingConnector struct{ driver.Connector }

// newStmtCachingConnector is the connector of a SQLite pool on dsn.
func newStmtCachingConnector(dsn string) (driver.Connector, error) {
	c, err := moderncsqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return stmtCachingConnector{c}, nil
}

// Connect opens a connection with an empty statement cache.
func (c stmtCachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(sqliteConn)
	if !ok {
		_ = conn.Close()
		return nil, fmt.Errorf("sqlite connection %T lacks methods database/sql asks for", conn)
	}
	return &stmtCachingConn{conn: sc, stmts: map[string]*cachedStmt{}}, nil
}

// sqliteConn is what a modernc.org/sqlite connection does that
// database/sql asks of it.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// stmtCachingConn is a SQLite connection whose data statements (SELECT,
// INSERT, UPDATE, DELETE, WITH) run as statements it prepared once and
// keeps, at most stmtCacheSize of them, the least recently used going
// first. A kept statement cannot go stale: SQLite prepares it again by
// itself when the schema changed since, whoever changed it. A statement
// whose rows are still open is not run again until they are closed; a
// query that needs it meanwhile runs unprepared.
//
// database/sql never uses a connection, its rows or its statements from
// two goroutines at once, so the cache needs no lock.
type stmtCachingConn struct {
	conn  sqliteConn
	stmts map[string]*cachedStmt
	clock uint64 // counts lookups, to find the least recently used
}

// cachedStmt is a statement a connection keeps prepared.
type cachedStmt struct {
	stmt     driver.Stmt
	lastUsed uint64
	busy     bool // its rows are open
	evicted  bool // left the cache while busy: closed with its rows
}

// Unwrap is the modernc.org/sqlite connection (see sqlite.Limit).
func (c *stmtCachingConn) Unwrap() driver.Conn { return c.conn }

// Prepare prepares a statement for database/sql, which owns it.
func (c *stmtCachingConn) Prepare(query string) (driver.Stmt, error) { return c.conn.Prepare(query) }

// PrepareContext prepares a statement for database/sql, which owns it.
func (c *stmtCachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.conn.PrepareContext(ctx, query)
}

// Begin begins a transaction with default options.
func (c *stmtCachingConn) Begin() (driver.Tx, error) {
	return c.conn.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx is the driver's.
func (c *stmtCachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.conn.BeginTx(ctx, opts)
}

// Ping is the driver's.
func (c *stmtCachingConn) Ping(ctx context.Context) error { return c.conn.Ping(ctx) }

// ResetSession is the driver's.
func (c *stmtCachingConn) ResetSession(ctx context.Context) error { return c.conn.ResetSession(ctx) }

// IsValid is the driver's.
func (c *stmtCachingConn) IsValid() bool { return c.conn.IsValid() }

// Close closes the kept statements, then the connection.
func (c *stmtCachingConn) Close() error {
	var errs []error
	for query, cs := range c.stmts {
		delete(c.stmts, query)
		errs = append(errs, cs.stmt.Close())
	}
	return errors.Join(append(errs, c.conn.Close())...)
}

// ExecContext runs query as its kept statement when it has one to spare.
func (c *stmtCachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.lookup(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.conn.ExecContext(ctx, query, args)
	}
	return cs.stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

// QueryContext runs query as its kept statement when it has one to spare;
// the statement is busy until the rows are closed.
func (c *stmtCachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.lookup(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.conn.QueryContext(ctx, query, args)
	}
	rows, err := cs.stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	cs.busy = true
	return &cachedRows{sqliteRows: rows.(sqliteRows), stmt: cs}, nil
}

// lookup returns the kept statement of query, preparing and keeping it
// when query is a data statement, or nil when query is not one or its
// statement is busy.
func (c *stmtCachingConn) lookup(ctx context.Context, query string) (*cachedStmt, error) {
	c.clock++
	if cs, ok := c.stmts[query]; ok {
		if cs.busy {
			return nil, nil
		}
		cs.lastUsed = c.clock
		return cs, nil
	}
	if !cacheable(query) {
		return nil, nil
	}
	stmt, err := c.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if len(c.stmts) >= stmtCacheSize {
		c.evictOldest()
	}
	cs := &cachedStmt{stmt: stmt, lastUsed: c.clock}
	c.stmts[query] = cs
	return cs, nil
}

// evictOldest drops the least recently used statement; one whose rows
// are open is closed with them.
func (c *stmtCachingConn) evictOldest() {
	var oldest string
	var at uint64
	for query, cs := range c.stmts {
		if oldest == "" || cs.lastUsed < at {
			oldest, at = query, cs.lastUsed
		}
	}
	cs := c.stmts[oldest]
	delete(c.stmts, oldest)
	if cs.busy {
		cs.evicted = true
		return
	}
	_ = cs.stmt.Close() // finalizing a reset statement does not fail
}

// cacheable reports whether query is a data statement, worth keeping
// prepared; schema changes and pragmas run once.
func cacheable(query string) bool {
	query = strings.TrimLeft(query, " \t\r\n(")
	end := strings.IndexFunc(query, func(r rune) bool { return !unicode.IsLetter(r) })
	if end < 0 {
		end = len(query)
	}
	switch strings.ToUpper(query[:end]) {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "REPLACE":
		return true
	}
	return false
}

// sqliteRows is what modernc.org/sqlite's rows do that database/sql asks
// of them.
type sqliteRows interface {
	driver.Rows
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeLength
	driver.RowsColumnTypeNullable
	driver.RowsColumnTypePrecisionScale
	driver.RowsColumnTypeScanType
}

// cachedRows are the rows of a kept statement, which they free when
// closed.
type cachedRows struct {
	sqliteRows
	stmt *cachedStmt
}

// Close closes the rows and frees their statement (closing it if it left
// the cache meanwhile).
func (r *cachedRows) Close() error {
	err := r.sqliteRows.Close()
	if cs := r.stmt; cs != nil {
		r.stmt = nil
		cs.busy = false
		if cs.evicted {
			err = errors.Join(err, cs.stmt.Close())
		}
	}
	return err
}
