package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
)

// TestConfigReloader: a good config.yaml replaces the model settings and
// says so; a broken one keeps them, said once per problem with file and
// line; a key that needs a restart is named; a change of nothing is silent.
func TestConfigReloader(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, config.FileName)
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("model:\n  base_url: http://a/v1\n  name: one\n")
	noEnv := func(string) string { return "" }
	base, err := loadServe(home, noEnv, config.Overrides{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	var published []engine.ModelSettings
	r := &configReloader{home: home, load: func() (config.Config, error) { return loadServe(home, noEnv, config.Overrides{}, nil) },
		base: base, models: engine.NewModelConfig(base),
		publish: func(s engine.ModelSettings) { published = append(published, s) },
		say:     func(l string) { said = append(said, l) }}
	for _, step := range []struct {
		name, file string
		model      string   // the model in use after the step
		lines      []string // what is said, in order (substrings)
	}{
		{"unchanged", "model:\n  base_url: http://a/v1\n  name: one\n", "one", nil},
		{"comment only", "# hi\nmodel:\n  base_url: http://a/v1\n  name: one\n", "one", nil},
		{"new model", "model:\n  base_url: http://b/v1\n  name: two\n", "two", []string{"config reloaded: model two at http://b/v1"}},
		{"unknown key", "model:\n  base_url: http://b/v1\n  nmae: three\n", "two", []string{"config.yaml:3", "nmae", "keeping the previous settings"}},
		{"same problem again", "model:\n  base_url: http://b/v1\n  nmae: three\n", "two", nil},
		{"invalid value", "model:\n  base_url: http://b/v1\n  name: two\nmax_iterations: 0\n", "two", []string{"max_iterations", "keeping the previous settings"}},
		{"restart key and model", "model:\n  base_url: http://b/v1\n  name: four\ndb: /elsewhere.db\n", "four",
			[]string{"config reloaded: model four", "config.yaml changed db: restart talaria serve"}},
		{"client-only key: silent", "model:\n  base_url: http://b/v1\n  name: four\ndb: /elsewhere.db\napprovals:\n  noninteractive: wait\n", "four", nil},
		{"removed file: defaults", "", "gpt-4o-mini", []string{"config reloaded: no model endpoint configured", "restart talaria serve"}},
	} {
		said = said[:0]
		if step.name == "removed file: defaults" {
			os.Remove(path)
		} else {
			write(step.file)
		}
		r.reload()
		cur, _ := r.models.Current()
		if cur.Name != step.model {
			t.Fatalf("%s: model %q, want %q", step.name, cur.Name, step.model)
		}
		all := strings.Join(said, "\n")
		if len(step.lines) == 0 && len(said) > 0 {
			t.Fatalf("%s: said %q", step.name, said)
		}
		for _, l := range step.lines {
			if !strings.Contains(all, l) {
				t.Fatalf("%s: said %q, want %q", step.name, said, l)
			}
		}
		for _, l := range said {
			if strings.Contains(l, "\n") {
				t.Fatalf("%s: more than one line: %q", step.name, l)
			}
		}
	}
	// Every good read is published (its time is what model set waits for).
	if len(published) != 6 || published[1].Model != "one" || published[2].Model != "two" || published[5].Configured {
		t.Fatalf("published %+v", published)
	}
}

// TestReloaderStart: a change of config.yaml made while serve starts
// (after its configuration was loaded, before the watch) reaches the
// model settings as soon as the watch begins; the flags serve was started
// with are applied to every reload, so they are never named as a change
// needing a restart.
func TestReloaderStart(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, config.FileName)
	if err := os.WriteFile(path, []byte("model:\n  base_url: http://a/v1\n  name: one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	db, port := filepath.Join(home, "flag.db"), 0
	load := func() (config.Config, error) {
		return loadServe(home, noEnv, config.Overrides{DB: &db}, &port)
	}
	started, err := load()
	if err != nil {
		t.Fatal(err)
	}
	// While the runtime starts: 'talaria model set'.
	if err := os.WriteFile(path, []byte("model:\n  base_url: http://b/v1\n  name: two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var said []string
	r := &configReloader{home: home, load: load, base: started, models: engine.NewModelConfig(started),
		publish: func(engine.ModelSettings) {},
		say: func(l string) {
			mu.Lock()
			defer mu.Unlock()
			said = append(said, l)
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.watch(ctx) }()
	deadline := time.Now().Add(time.Minute)
	for cur, _ := r.models.Current(); cur.Name != "two"; cur, _ = r.models.Current() {
		if time.Now().After(deadline) {
			t.Fatalf("the change made during start never applied: model %q", cur.Name)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	for _, l := range said {
		if strings.Contains(l, "restart") {
			t.Fatalf("a flag taken for a change: %q", said)
		}
	}
}

// TestWatchEvents: only a change of config.yaml wakes a reload (the
// database's files written every second do not); a lost event reloads at
// once; every watch problem is one line.
func TestWatchEvents(t *testing.T) {
	for _, tt := range []struct {
		ev   fsnotify.Event
		want bool
	}{
		{fsnotify.Event{Name: "/h/config.yaml", Op: fsnotify.Write}, true},
		{fsnotify.Event{Name: "/h/config.yaml", Op: fsnotify.Create}, true},
		{fsnotify.Event{Name: "/h/config.yaml", Op: fsnotify.Rename}, true},
		{fsnotify.Event{Name: "/h/config.yaml", Op: fsnotify.Remove}, true},
		{fsnotify.Event{Name: "/h/config.yaml", Op: fsnotify.Chmod}, false},
		{fsnotify.Event{Name: "/h/talaria.db-wal", Op: fsnotify.Write}, false},
		{fsnotify.Event{Name: "/h/talaria.db-shm", Op: fsnotify.Write}, false},
		{fsnotify.Event{Name: "/h/.config-123.yaml", Op: fsnotify.Create}, false},
		{fsnotify.Event{Name: "/h/config.yaml.swp", Op: fsnotify.Write}, false},
	} {
		if got := isConfigEvent(tt.ev); got != tt.want {
			t.Errorf("isConfigEvent(%v) = %t, want %t", tt.ev, got, tt.want)
		}
	}
	for _, tt := range []struct {
		err    error
		reload bool
		want   string
	}{
		{fsnotify.ErrEventOverflow, true, "reading config.yaml again"},
		{fmt.Errorf("read events: %w", fsnotify.ErrEventOverflow), true, "too many file events"},
		{errors.New("inotify: bad\nthings"), false, "watching config.yaml: inotify: bad; things (send SIGHUP"},
	} {
		line, reload := watchProblem(tt.err)
		if reload != tt.reload || !strings.Contains(line, tt.want) || strings.Contains(line, "\n") {
			t.Errorf("watchProblem(%v) = %q, %t", tt.err, line, reload)
		}
	}
}
