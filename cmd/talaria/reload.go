package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/fsnotify/fsnotify"
	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// reloadDebounce lets an editor finish writing (or replacing) config.yaml
// before serve reads it.
const reloadDebounce = 150 * time.Millisecond

// configReloader applies config.yaml changes to a running serve: the model
// settings take effect for new model calls at once; a change to any other
// key serve uses is named in one line saying it needs a restart (keys only
// clients read are not: see talaria.ConfigChanges);
// a file that does not load keeps the previous settings, in one line
// naming the file and line.
type configReloader struct {
	// home is watched for config.yaml.
	home string
	// load reads the configuration as the process started with it: the
	// file, the environment and the same command-line flags, so that a
	// flag is never taken for a change of the file.
	load func() (config.Config, error)
	// base is the configuration in use: at start the one the runtime
	// (and its model settings) started with, then the last one loaded.
	base    config.Config
	models  *talaria.ModelConfig
	publish func(talaria.ModelSettings)
	say     func(string)
	lastBad string
}

// reload reads config.yaml again and applies what changed.
func (r *configReloader) reload() {
	next, err := r.load()
	if err != nil {
		line := fmt.Sprintf("%s; keeping the previous settings", oneLine(err))
		if line != r.lastBad { // one line per distinct problem
			r.say(line)
		}
		r.lastBad = line
		return
	}
	r.lastBad = ""
	live, restart, err := talaria.ConfigChanges(r.base, next)
	if err != nil {
		r.say(oneLine(err))
		return
	}
	r.base = next
	if len(live) > 0 {
		r.models.Set(next)
		r.say("config reloaded: " + r.models.Settings().Summary())
	}
	if len(restart) > 0 {
		r.say(fmt.Sprintf("config.yaml changed %s: restart talaria serve to apply (only the model settings apply at once)",
			strings.Join(restart, ", ")))
	}
	// Published after every read, changed or not, and after its lines: its
	// time tells 'model set' that serve has read what it wrote.
	r.publish(r.models.Settings())
}

// loadServe loads and checks the configuration as serve does at start:
// file, environment, then the flags given (o, and --temporal-port when
// port is not nil).
func loadServe(home string, getenv func(string) string, o config.Overrides, port *int) (config.Config, error) {
	cfg, err := config.Resolve(home, getenv, o)
	if err == nil && port != nil {
		cfg.Temporal.Port = *port
		err = cfg.Validate()
	}
	return cfg, err
}

// watch reloads on every change of config.yaml (the directory is watched,
// so an editor that replaces the file is seen) and on SIGHUP, until ctx
// ends. It reloads once as soon as it watches: a change made while the
// process started (after base was loaded, before the watch) is not lost.
func (r *configReloader) watch(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var events <-chan fsnotify.Event
	var errs <-chan error
	if fw, err := fsnotify.NewWatcher(); err != nil {
		r.say(fmt.Sprintf("config.yaml changes are not watched (%v): send SIGHUP to reload", err))
	} else {
		defer fw.Close()
		if err := fw.Add(r.home); err != nil {
			r.say(fmt.Sprintf("config.yaml changes are not watched (%v): send SIGHUP to reload", err))
		}
		events, errs = fw.Events, fw.Errors
	}
	r.reload()
	var settle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if isConfigEvent(ev) { // the database's -wal/-shm writes end here
				settle = time.After(reloadDebounce)
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			line, again := watchProblem(err)
			r.say(line)
			if again {
				r.reload()
			}
		case <-hup:
			r.reload()
		case <-settle:
			settle = nil
			r.reload()
		}
	}
}

// isConfigEvent reports whether ev may have changed config.yaml: a write,
// creation, removal or rename of that file; not a change of its mode, nor
// anything else in the directory (the database's files). Pure.
func isConfigEvent(ev fsnotify.Event) bool {
	return filepath.Base(ev.Name) == config.FileName &&
		ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Remove|fsnotify.Rename) != 0
}

// watchProblem is the one line said for an error of the watch, and
// whether to reload now: after an overflow, a change of config.yaml may
// be among the events lost. Pure.
func watchProblem(err error) (line string, reload bool) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		return "warning: too many file events at once; reading config.yaml again in case a change was lost", true
	}
	return fmt.Sprintf("warning: watching config.yaml: %s (send SIGHUP to reload)", oneLine(err)), false
}

// modelEnv names the variables of the environment that set model settings.
func modelEnv(getenv func(string) string) []string {
	var set []string
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "TALARIA_MODEL"} {
		if getenv(k) != "" {
			set = append(set, k)
		}
	}
	return set
}

// startReloader watches config.yaml for serve until the returned stop is
// called (before serve.json is withdrawn: nothing rewrites it after). cfg
// is the configuration rt started with; load reads it again the same way.
func startReloader(ctx context.Context, cmd *cobra.Command, cfg config.Config, load func() (config.Config, error),
	rt *talaria.Runtime, info talaria.ServeInfo) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		serveReloader(cmd, cfg, load, rt, info).watch(ctx)
	}()
	return func() { cancel(); <-done }
}

// serveReloader is serve's reloader: what it applies is published in
// serve.json, what it says is one line on stderr. Its base is cfg, the
// configuration rt.Models was made from (a later read of the file could
// hold a change rt.Models never saw).
func serveReloader(cmd *cobra.Command, cfg config.Config, load func() (config.Config, error),
	rt *talaria.Runtime, info talaria.ServeInfo) *configReloader {
	errOut := cmd.ErrOrStderr()
	var mu sync.Mutex
	return &configReloader{
		home: cfg.Home, load: load, base: cfg, models: rt.Models,
		publish: func(s talaria.ModelSettings) {
			mu.Lock()
			defer mu.Unlock()
			info = info.WithModel(s, time.Now())
			if err := talaria.WriteServeInfo(cfg.Home, info); err != nil {
				fmt.Fprintf(errOut, "talaria serve: %s\n", oneLine(err))
			}
		},
		say: func(line string) { fmt.Fprintf(errOut, "talaria serve: %s\n", line) },
	}
}
