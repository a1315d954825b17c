package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/talaria-agent/talaria/internal/textline"
)

// endpointCheckTimeout bounds the look at a model endpoint that serve and
// send take before going on (neither waits for the endpoint).
const endpointCheckTimeout = 5 * time.Second

// unreachable is why the model endpoint does not answer (one line), or ""
// when it answers HTTP at all (talaria.Ping: any status counts).
func unreachable(ctx context.Context, endpoint, key string) string {
	ctx, cancel := context.WithTimeout(ctx, endpointCheckTimeout)
	defer cancel()
	if err := talaria.Ping(ctx, talaria.Endpoint{BaseURL: endpoint, APIKey: key}); err != nil {
		return textline.Of(oneLine(err), 400)
	}
	return ""
}

// warnIfUnreachable checks serve's model endpoint once and writes one
// warning line to w when it does not answer. serve goes on: the endpoint
// may come up later, and turns retry their model calls meanwhile.
func warnIfUnreachable(ctx context.Context, w io.Writer, endpoint, key string) {
	if why := unreachable(ctx, endpoint, key); why != "" && ctx.Err() == nil {
		fmt.Fprintf(w, "talaria serve: warning: %s; serving anyway: turns retry their model calls, then fail, until it answers\n", why)
	}
}

// serveEndpointWarning is the one-line warning for a message handed to the
// serve of home whose model endpoint is not configured or does not answer,
// or "" when it answers (or no serve tells which endpoint it uses). The look
// carries no key: this shell's key is not serve's and must not be sent to
// serve's endpoint (any HTTP answer counts as reachable anyway).
func serveEndpointWarning(ctx context.Context, home, session string) string {
	info, err := talaria.ReadServeInfo(home)
	if err != nil {
		return ""
	}
	if !info.ModelConfigured {
		return fmt.Sprintf("talaria: warning: talaria serve (pid %d) has no model endpoint configured; the message is delivered and "+
			"its turn fails until one is: %s", info.PID, talaria.NoEndpointHelp)
	}
	why := unreachable(ctx, info.ModelEndpoint, "")
	if why == "" {
		return ""
	}
	return fmt.Sprintf("talaria: warning: talaria serve (pid %d) cannot reach its model: %s; the message is delivered "+
		"and its turn retries, then fails if the endpoint stays down (watch: talaria status %s)", info.PID, why, session)
}
