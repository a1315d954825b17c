package models

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tableRoots maps each table of a SQLite store to its root page: a table
// rebuilt by a migration (copied to a new table, renamed) gets a new one.
func tableRoots(t *testing.T, s *Store) map[string]int {
	t.Helper()
	var rows []struct {
		Name     string
		Rootpage int
	}
	if err := s.db.Raw("SELECT name, rootpage FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	roots := map[string]int{}
	for _, r := range rows {
		roots[r.Name] = r.Rootpage
	}
	return roots
}

// fillStore writes a few turns, messages, todos, a cron job and an event,
// so every table has rows.
func fillStore(t *testing.T, s *Store) {
	t.Helper()
	for i := range 3 {
		if _, err := writeLoad(t.Context(), s, fmt.Sprintf("fill-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.db.Exec("INSERT INTO cron_jobs (id, name, schedule, prompt, created_at, updated_at) VALUES ('j', 'n', '* * * * *', 'p', ?, ?)", now(), now()).Error; err != nil {
		t.Fatal(err)
	}
}

// Opening a store whose schema is current, with rows in every table,
// rebuilds no table: it used to copy every table with a sized text column
// on each Open.
func TestSQLiteReopenKeepsTables(t *testing.T) {
	tests := []struct {
		name string
		// prepare takes the database to the shape under test.
		prepare func(t *testing.T, s *Store)
	}{
		{name: "written by this version", prepare: func(*testing.T, *Store) {}},
		{
			// The previous gorm dialector rebuilt tables on every Open and
			// wrote their defaults in double quotes.
			name: "rebuilt by the previous dialector",
			prepare: func(t *testing.T, s *Store) {
				for _, q := range []string{
					"CREATE TABLE `sessions__temp`  (`id` text,`model` text,`title` text,`parent_session_id` text NOT NULL DEFAULT \"\",`lineage_id` text NOT NULL DEFAULT \"\",`generation` integer NOT NULL DEFAULT 0,`turn_count` integer,`last_reservation` text NOT NULL DEFAULT \"\",`system_prompt` text,`created_at` datetime,`updated_at` datetime,PRIMARY KEY (`id`))",
					"INSERT INTO `sessions__temp` SELECT `id`,`model`,`title`,`parent_session_id`,`lineage_id`,`generation`,`turn_count`,`last_reservation`,`system_prompt`,`created_at`,`updated_at` FROM `sessions`",
					"DROP TABLE `sessions`",
					"ALTER TABLE `sessions__temp` RENAME TO `sessions`",
					"CREATE INDEX `idx_sessions_parent_session_id` ON `sessions`(`parent_session_id`)",
					"CREATE INDEX `idx_sessions_lineage_id` ON `sessions`(`lineage_id`)",
				} {
					if err := s.db.Exec(q).Error; err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn := filepath.Join(t.TempDir(), "talaria.db")
			s, err := Open(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			fillStore(t, s)
			tt.prepare(t, s)
			before := tableRoots(t, s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			s = openStore(t, dsn)
			if after := tableRoots(t, s); !maps.Equal(before, after) {
				t.Errorf("Open rebuilt tables: root pages before %v, after %v", before, after)
			}
			sess, err := s.Session(t.Context(), "shared")
			if err != nil || sess.TurnCount != 3 {
				t.Errorf("session after reopen = %+v, %v; want 3 turns", sess, err)
			}
		})
	}
}

// A migration that must rebuild a table (SQLite cannot change a column's
// type in place) does it inside the migration transaction, at once, and
// keeps the rows: it used to wait for a second connection until
// busy_timeout failed Open with "database is locked".
func TestSQLiteMigrationRebuildsTableInItsTransaction(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "talaria.db")
	s, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	fillStore(t, s)
	for _, q := range []string{
		"ALTER TABLE sessions DROP COLUMN generation",
		"ALTER TABLE sessions ADD COLUMN generation text NOT NULL DEFAULT '0'",
	} {
		if err := s.db.Exec(q).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Well inside busy_timeout (10 s): a stalled rebuild fails the test.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	s, err = Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	var ddl string
	if err := s.db.Raw("SELECT sql FROM sqlite_master WHERE name = 'sessions'").Scan(&ddl).Error; err != nil {
		t.Fatal(err)
	}
	var typ string
	if err := s.db.Raw("SELECT type FROM pragma_table_info('sessions') WHERE name = 'generation'").Scan(&typ).Error; err != nil {
		t.Fatal(err)
	}
	if !strings.EqualFold(typ, "integer") {
		t.Errorf("generation column type = %q after Open, want integer; DDL: %s", typ, ddl)
	}
	sess, err := s.Session(t.Context(), "shared")
	if err != nil || sess.TurnCount != 3 {
		t.Errorf("session after migration = %+v, %v; want 3 turns", sess, err)
	}
}
