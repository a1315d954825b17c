package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"
)

// watchStore runs a long-lived process (serve, worker, scheduler) until
// ctx ends or its store is gone, watching the store as serve does
// (talaria.Runtime.WatchStore): while the database does not answer, work
// pauses and each change is one line on stderr; a SQLite file removed or
// replaced stops the process with one line and exit status 1 (the deferred
// stops of the caller end its scheduler, worker and server), and the store
// is never created again. name is the command ("serve", "worker", ...).
func watchStore(ctx context.Context, cmd *cobra.Command, rt *talaria.Runtime, name string) error {
	say := func(line string) {
		fmt.Fprintf(cmd.ErrOrStderr(), "talaria %s: %s\n", name, forProcess(oneLine(errors.New(line)), name))
	}
	if err := rt.WatchStore(ctx, talaria.StoreCheckEvery, say); err != nil {
		say(err.Error())
		return &exitError{code: exitFailure}
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "talaria %s: shutting down\n", name)
	return nil
}

// serveWord matches "serve" as a word.
var serveWord = regexp.MustCompile(`\bserve\b`)

// forProcess rewrites a line the store watcher says about serve for the
// process named name ("talaria worker" for "worker"): a worker or a
// scheduler whose store is gone must not tell the user to restart serve.
// Pure.
func forProcess(line, name string) string {
	if name == "serve" {
		return line
	}
	return serveWord.ReplaceAllLiteralString(line, "talaria "+name)
}
