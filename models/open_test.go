package models

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestOpenMigratesTwice(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		want := "sqlite"
		if strings.HasPrefix(dsn, "postgres") {
			want = "postgres"
		}

		first, err := Open(t.Context(), dsn)
		if err != nil {
			t.Fatalf("first Open: %v", err)
		}
		if got := first.Dialect(); got != want {
			t.Errorf("Dialect() = %q, want %q", got, want)
		}
		stored, err := first.AppendMessages(t.Context(), []Message{userMessage("s1", "k1", "hello")})
		if err != nil {
			t.Fatalf("AppendMessages: %v", err)
		}
		if err := first.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}

		second := openStore(t, dsn)
		got, err := second.Message(t.Context(), stored[0].ID)
		if err != nil {
			t.Fatalf("Message after reopening: %v", err)
		}
		if got.Content != "hello" {
			t.Errorf("Content = %q, want %q", got.Content, "hello")
		}
		if err := second.migrate(t.Context()); err != nil {
			t.Errorf("migrating an up-to-date schema: %v", err)
		}
	})
}

func TestOpenConcurrentlyOnFreshDatabase(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		const n = 4
		stores := make([]*Store, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { stores[i], errs[i] = Open(t.Context(), dsn) })
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Errorf("Open %d: %v", i, errs[i])
				continue
			}
			if err := stores[i].Close(); err != nil {
				t.Errorf("Close %d: %v", i, err)
			}
		}
	})
}

func TestOpenBadDSN(t *testing.T) {
	missingDir := filepath.Join(t.TempDir(), "missing", "talaria.db")
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name       string
		dsn        string
		invalidDSN bool     // the error wraps ErrInvalidDSN
		is         error    // the error also wraps this, if set
		mustNotSay []string // secrets the message must not repeat
	}{
		{name: "empty", dsn: "", invalidDSN: true},
		{name: "blank", dsn: "  \t", invalidDSN: true},
		{name: "postgres bad escape", dsn: "postgres://%zz", invalidDSN: true},
		{name: "postgres bad escape with password", dsn: "postgres://u:hunter2@h/%zz", invalidDSN: true, mustNotSay: []string{"hunter2"}},
		{name: "postgresql bad port", dsn: "postgresql://u:hunter2@127.0.0.1:notaport/x", invalidDSN: true, mustNotSay: []string{"hunter2"}},
		{name: "postgres bad connect_timeout", dsn: "postgres://127.0.0.1/x?connect_timeout=soon", invalidDSN: true},
		{name: "postgres unreachable", dsn: "postgres://nouser@127.0.0.1:1/x?connect_timeout=2"},
		{name: "postgres unreachable default timeout", dsn: "postgres://nouser:hunter2@127.0.0.1:1/x", mustNotSay: []string{"hunter2"}},
		{name: "sqlite missing dir", dsn: missingDir, is: fs.ErrNotExist},
		{name: "sqlite file: missing dir", dsn: "file:" + missingDir, is: fs.ErrNotExist},
		{name: "sqlite parent is a file", dsn: filepath.Join(notDir, "talaria.db")},
		{name: "sqlite remote host", dsn: "file://elsewhere/talaria.db", invalidDSN: true},
		{name: "sqlite no file name", dsn: "sqlite://", invalidDSN: true},
		{name: "sqlite only parameters", dsn: "?_pragma=foreign_keys(1)", invalidDSN: true},
		{name: "sqlite bad parameters", dsn: filepath.Join(t.TempDir(), "x.db") + "?a=%zz", invalidDSN: true},
		{name: "sqlite unknown txlock", dsn: filepath.Join(t.TempDir(), "x.db") + "?_txlock=sometimes"},
		{name: "sqlite bad pragma", dsn: filepath.Join(t.TempDir(), "x.db") + "?_pragma=no_such_thing((("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Open gives up by itself (a postgres connection after five
			// seconds); what that costs is BenchmarkOpenBadDSN's to show.
			giveUp, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			s, err := Open(giveUp, tt.dsn)
			if giveUp.Err() != nil {
				t.Fatalf("Open(%q) had not failed after two minutes: %v", tt.dsn, err)
			}
			if err == nil {
				_ = s.Close()
				t.Fatalf("Open(%q) succeeded, want an error", tt.dsn)
			}
			if got := errors.Is(err, ErrInvalidDSN); got != tt.invalidDSN {
				t.Errorf("errors.Is(%v, ErrInvalidDSN) = %v, want %v", err, got, tt.invalidDSN)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.is)
			}
			for _, secret := range tt.mustNotSay {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q reveals %q", err, secret)
				}
			}
		})
	}
}

// BenchmarkOpenBadDSN measures how long Open takes to refuse a DSN it
// cannot use: at once for one it cannot read or a missing directory, after
// connect_timeout for an unreachable postgres.
func BenchmarkOpenBadDSN(b *testing.B) {
	for _, bc := range []struct{ name, dsn string }{
		{"postgres bad port", "postgresql://u:hunter2@127.0.0.1:notaport/x"},
		{"postgres unreachable", "postgres://nouser@127.0.0.1:1/x?connect_timeout=2"},
		{"postgres unreachable default timeout", "postgres://nouser:hunter2@127.0.0.1:1/x"},
		{"sqlite missing dir", filepath.Join(b.TempDir(), "missing", "talaria.db")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if s, err := Open(b.Context(), bc.dsn); err == nil {
					_ = s.Close()
					b.Fatalf("Open(%q) succeeded", bc.dsn)
				}
			}
		})
	}
}

func TestOpenSQLiteDSNForms(t *testing.T) {
	tests := []struct {
		name    string
		dsn     func(path string) string
		memory  bool
		journal string
	}{
		{name: "path", dsn: func(p string) string { return p }, journal: "wal"},
		{name: "file: path", dsn: func(p string) string { return "file:" + p }, journal: "wal"},
		{name: "file:// URI", dsn: func(p string) string { return "file://" + p }, journal: "wal"},
		{name: "file://localhost URI", dsn: func(p string) string { return "file://localhost" + p }, journal: "wal"},
		{name: "sqlite:// path", dsn: func(p string) string { return "sqlite://" + p }, journal: "wal"},
		{name: "own parameters", dsn: func(p string) string { return p + "?_pragma=busy_timeout(2000)&_pragma=journal_mode(DELETE)" }, journal: "delete"},
		{name: "memory", dsn: func(string) string { return ":memory:" }, memory: true, journal: "memory"},
		{name: "file::memory:", dsn: func(string) string { return "file::memory:" }, memory: true, journal: "memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dir with space", "talaria.db")
			if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			s := openStore(t, tt.dsn(path))
			if got := s.Dialect(); got != "sqlite" {
				t.Errorf("Dialect() = %q, want sqlite", got)
			}
			if _, err := s.NextTurn(t.Context(), "s", "m", ""); err != nil {
				t.Fatalf("NextTurn: %v", err)
			}
			if _, err := os.Stat(path); (err == nil) == tt.memory {
				t.Errorf("stat %s: %v; in memory: %v", path, err, tt.memory)
			}
			var journal string
			if err := s.db.Raw("PRAGMA journal_mode").Scan(&journal).Error; err != nil {
				t.Fatal(err)
			}
			if !strings.EqualFold(journal, tt.journal) {
				t.Errorf("journal_mode = %q, want %q", journal, tt.journal)
			}
		})
	}
}

func TestNewSQLiteDialect(t *testing.T) {
	tests := []struct {
		dsn         string
		path        string
		memory      bool
		wantPragmas []string
	}{
		{dsn: "/data/talaria.db", path: "/data/talaria.db",
			wantPragmas: []string{"busy_timeout(10000)", "foreign_keys(1)", "synchronous(NORMAL)"}},
		{dsn: "rel/talaria.db", path: "rel/talaria.db"},
		{dsn: "sqlite:///data/talaria.db", path: "/data/talaria.db"},
		{dsn: "file:///data/my%20db.db", path: "/data/my db.db"},
		{dsn: "file:rel.db?mode=rwc", path: "rel.db"},
		{dsn: "/d/x.db?_pragma=synchronous(FULL)&_pragma=busy_timeout=50",
			path: "/d/x.db", wantPragmas: []string{"synchronous(FULL)", "busy_timeout=50", "foreign_keys(1)"}},
		{dsn: ":memory:", memory: true, wantPragmas: []string{"busy_timeout(10000)", "foreign_keys(1)", "synchronous(NORMAL)"}},
		{dsn: "file:x?mode=memory", memory: true},
	}
	for _, tt := range tests {
		t.Run(tt.dsn, func(t *testing.T) {
			d, err := newSQLiteDialect(tt.dsn)
			if err != nil {
				t.Fatalf("newSQLiteDialect: %v", err)
			}
			if d.path != tt.path || d.memory != tt.memory {
				t.Errorf("path, memory = %q, %v; want %q, %v", d.path, d.memory, tt.path, tt.memory)
			}
			_, rawQuery, _ := strings.Cut(d.dsn, "?")
			q := parseQuery(t, rawQuery)
			if q.Get("_txlock") != "immediate" || q.Get("_time_format") != "sqlite" {
				t.Errorf("dsn %q lacks _txlock=immediate or _time_format=sqlite", d.dsn)
			}
			if tt.wantPragmas != nil && !sameElements(q["_pragma"], tt.wantPragmas) {
				t.Errorf("pragmas = %q, want %q", q["_pragma"], tt.wantPragmas)
			}
		})
	}
}

func sameElements(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}
