package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/tools"
)

// ErrServerDown: the MCP server could not be reached or started.
var ErrServerDown = errors.New("MCP server unavailable")

// Servers keeps one session per configured MCP server.
type Servers struct {
	cfg    map[string]config.MCPServer
	policy tools.Policy
	logger *slog.Logger

	mu       sync.Mutex
	sessions map[string]*sdk.ClientSession
}

// New prepares the servers of cfg; nothing is started yet. policy gives
// stdio servers the tools' environment allowlist.
func New(cfg map[string]config.MCPServer, policy tools.Policy, logger *slog.Logger) *Servers {
	logger = cmp.Or(logger, slog.Default())
	return &Servers{cfg: cfg, policy: policy, logger: logger, sessions: map[string]*sdk.ClientSession{}}
}

// Names are the configured servers, sorted.
func (s *Servers) Names() []string {
	names := slices.Sorted(maps.Keys(s.cfg))
	return names
}

// timeout is how long one call of the server may take.
func (s *Servers) timeout(name string) time.Duration {
	if t := s.cfg[name].Timeout; t > 0 {
		return t
	}
	return config.DefaultMCPTimeout
}

// session returns the server's session, connecting when there is none.
func (s *Servers) session(ctx context.Context, name string) (*sdk.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cs, ok := s.sessions[name]; ok {
		return cs, nil
	}
	srv, ok := s.cfg[name]
	if !ok {
		return nil, fmt.Errorf("no MCP server %q is configured", name)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "talaria", Version: "1"}, nil)
	cctx, cancel := context.WithTimeout(ctx, s.timeout(name))
	defer cancel()
	cs, err := client.Connect(cctx, s.transport(srv), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrServerDown, name, err)
	}
	s.sessions[name] = cs
	return cs, nil
}

// transport reaches a server: its command over stdio, in the tools'
// environment (plus its own env) so no secret of the worker reaches it;
// or its URL, with its headers.
func (s *Servers) transport(srv config.MCPServer) sdk.Transport {
	if srv.URL != "" {
		return &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: headerTransport{srv.Headers}}, MaxRetries: -1}
	}
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Dir = srv.Cwd
	cmd.Env = tools.ToolEnviron(os.Environ(), s.policy)
	for k, v := range srv.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = nil // the server's log is not the worker's
	return &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
}

// headerTransport adds a server's configured headers to each request.
type headerTransport struct{ headers map[string]string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// drop forgets a session that failed, so the next call reconnects.
func (s *Servers) drop(name string, cs *sdk.ClientSession) {
	s.mu.Lock()
	if s.sessions[name] == cs {
		delete(s.sessions, name)
	}
	s.mu.Unlock()
	_ = cs.Close()
}

// Close ends every session (and stops the stdio servers).
func (s *Servers) Close() {
	s.mu.Lock()
	sessions := s.sessions
	s.sessions = map[string]*sdk.ClientSession{}
	s.mu.Unlock()
	for _, cs := range sessions {
		_ = cs.Close()
	}
}

// ServerTools are the tools a server offers, narrowed by its
// tools.include and tools.exclude.
func (s *Servers) ServerTools(ctx context.Context, name string) ([]*sdk.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout(name))
	defer cancel()
	cs, err := s.session(ctx, name)
	if err != nil {
		return nil, err
	}
	var out []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			s.drop(name, cs)
			return nil, fmt.Errorf("%w: %s: list its tools: %v", ErrServerDown, name, err)
		}
		if keep(s.cfg[name], t.Name) {
			out = append(out, t)
		}
	}
	return out, nil
}

// keep applies a server's include and exclude lists. Pure.
func keep(srv config.MCPServer, tool string) bool {
	included := len(srv.Tools.Include) == 0
	for _, n := range srv.Tools.Include {
		included = included || n == tool
	}
	for _, n := range srv.Tools.Exclude {
		if n == tool {
			return false
		}
	}
	return included
}

// Call calls a server's tool. A transport failure drops the session (the
// next call starts the server again) and is ErrServerDown.
func (s *Servers) Call(ctx context.Context, server, tool string, args map[string]any) (*sdk.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout(server))
	defer cancel()
	cs, err := s.session(ctx, server)
	if err != nil {
		return nil, err
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	var protocol *jsonrpc.Error
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &protocol):
		return nil, fmt.Errorf("%s refused the call: %s", server, protocol.Message)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		s.drop(server, cs)
		return nil, fmt.Errorf("%w: %s did not answer within %s (the next call starts it again)", ErrServerDown, server, s.timeout(server))
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	// The connection failed: the server died or hung up.
	s.drop(server, cs)
	return nil, fmt.Errorf("%w: %s: %v (the next call starts it again)", ErrServerDown, server, err)
}
