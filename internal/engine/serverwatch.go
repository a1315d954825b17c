package engine

import (
	"context"
	"time"

	"go.temporal.io/sdk/client"
)

const (
	// serverCheckEvery is how often a client waiting on a turn asks its
	// server whether it answers.
	serverCheckEvery = time.Second
	// serverCheckTimeout bounds one such check.
	serverCheckTimeout = 2 * time.Second
	// serverMissesToSay is how many checks in a row must go unanswered
	// before the client says the server stopped answering.
	serverMissesToSay = 2
)

// serverWatch is what a waiting client knows of its server: whether it
// said the server is down, and how many checks in a row failed.
type serverWatch struct {
	down   bool
	misses int
}

// next is the state a check leads to, and what to say about the change
// ("" when nothing). name names the server ("talaria serve at HOST:PORT").
// Pure.
func (w serverWatch) next(answered bool, name string) (serverWatch, string) {
	switch {
	case answered && w.down:
		return serverWatch{}, name + " answers again; waiting for the turn"
	case answered:
		return serverWatch{}, ""
	}
	w.misses++
	if w.down || w.misses < serverMissesToSay {
		return w, ""
	}
	w.down = true
	return w, name + " stopped answering; the turn goes on when it is back, and this client waits for it (Ctrl-C stops waiting)"
}

// ServerName is how a waiting client names its server in what it says:
// Peer when set, else "temporal at ADDRESS".
func (rt *Runtime) ServerName() string {
	if rt.Peer != "" {
		return rt.Peer
	}
	return "temporal at " + rt.Config.Temporal.Address
}

// say shows a line to the person waiting: through Notify when set, else
// as a warning in the log.
func (rt *Runtime) say(line string) {
	if rt.Notify != nil {
		rt.Notify(line)
		return
	}
	rt.logger.Warn(line)
}

// watchedKey marks a context whose waits are already watched.
type watchedKey struct{}

// watchServer checks, until the returned stop is called, that the Temporal
// server of a client answers, and says once when it stops answering
// (serverMissesToSay checks in a row) and once when it answers again. The
// wait itself goes on: a turn is durable, and a server restarted (by a
// supervisor, by hand) lets it finish. A runtime that embeds its server
// (rt.Server) does not watch itself; a context already watched is not
// watched twice.
func (rt *Runtime) watchServer(ctx context.Context) (context.Context, func()) {
	if rt.Server != nil || rt.Client == nil || ctx.Value(watchedKey{}) != nil {
		return ctx, func() {}
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		rt.checkServer(wctx, serverCheckEvery)
	}()
	return context.WithValue(ctx, watchedKey{}, true), func() {
		cancel()
		<-done
	}
}

// checkServer runs the checks of watchServer every interval until ctx ends.
func (rt *Runtime) checkServer(ctx context.Context, interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var w serverWatch
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		cctx, cancel := context.WithTimeout(ctx, serverCheckTimeout)
		_, err := rt.Client.CheckHealth(cctx, &client.CheckHealthRequest{})
		cancel()
		if ctx.Err() != nil {
			return
		}
		var msg string
		if w, msg = w.next(err == nil, rt.ServerName()); msg != "" {
			rt.say(msg)
		}
	}
}
