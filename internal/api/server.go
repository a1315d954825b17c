package api

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/sandbox"
)

// Limits of the server.
const (
	// MaxBodyBytes bounds a request body (MaxPictureBodyBytes the body of
	// one that may carry pictures).
	MaxBodyBytes = 4 << 20
	// readHeaderTimeout and readTimeout bound how long a client may take
	// to send its request; idleTimeout how long a kept-alive connection
	// waits. No write timeout: an event stream lasts as long as its turn.
	readHeaderTimeout = 10 * time.Second
	readTimeout       = time.Minute
	idleTimeout       = 2 * time.Minute
)

// ErrNoKey means the API would listen beyond this machine without a key.
var ErrNoKey = errors.New("the API listens beyond this machine and has no key")

// ErrListen means the API's address could not be listened on.
var ErrListen = errors.New("cannot listen")

// Options configure a Server.
type Options struct {
	// Runtime is the engine: its client (Temporal) and store.
	Runtime *engine.Runtime
	// Config is the process's configuration: api.*, the model's name,
	// max_iterations, approvals and the turn template.
	Config config.Config
	// Key is the bearer key every route but /health asks for. It must be
	// set.
	Key string
	// Workdir is where the API's turns resolve relative paths.
	Workdir string
	// Logger receives the server's errors (default slog.Default()).
	Logger *slog.Logger
	// Webhooks, when set, serves /webhooks/...: the messaging platforms'
	// requests, which come without the key and are let in by their own
	// signatures.
	Webhooks http.Handler
}

// Server is the HTTP API.
type Server struct {
	rt      *engine.Runtime
	cfg     config.Config
	keySum  [sha256.Size]byte
	workdir string
	logger  *slog.Logger
	hooks   http.Handler
	handler http.Handler
	// patterns are the API's routes as registered (the page's aside).
	patterns []string
	http     *http.Server
	listener net.Listener
}

// New builds the API server.
func New(o Options) (*Server, error) {
	if o.Runtime == nil {
		return nil, errors.New("api: no runtime")
	}
	if len(o.Key) < config.MinAPIKeyLen {
		return nil, fmt.Errorf("api: the key must be at least %d characters", config.MinAPIKeyLen)
	}
	s := &Server{rt: o.Runtime, cfg: o.Config, keySum: sha256.Sum256([]byte(o.Key)), workdir: o.Workdir,
		logger: o.Logger, hooks: o.Webhooks}
	s.logger = cmp.Or(s.logger, slog.Default())
	s.handler = s.routes()
	return s, nil
}

// CheckListen refuses an address beyond loopback without a configured
// key: the generated key is for this machine's own users.
func CheckListen(listen string, configuredKey bool) error {
	if !configuredKey && !loopbackOnly(listen) {
		return fmt.Errorf("%w: api.listen %q is reachable from other machines; set api.key (or TALARIA_API_KEY) to a key of at least %d characters, or listen on 127.0.0.1",
			ErrNoKey, listen, config.MinAPIKeyLen)
	}
	return nil
}

// loopbackOnly reports whether listen names only this machine; a host
// name must resolve to loopback addresses only.
func loopbackOnly(listen string) bool {
	if !config.Loopback(listen) {
		return false
	}
	host, _, _ := net.SplitHostPort(listen)
	if net.ParseIP(host) != nil {
		return true
	}
	addrs, err := net.LookupHost(host)
	if err != nil || len(addrs) == 0 {
		return false
	}
	return !slices.ContainsFunc(addrs, func(a string) bool { ip := net.ParseIP(a); return ip == nil || !ip.IsLoopback() })
}

// Handler is the API's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Listen binds addr and serves the API there until Close.
func (s *Server) Listen(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%w on %s for the API: %v", ErrListen, addr, err)
	}
	sandbox.ProtectPorts(l.Addr().(*net.TCPAddr).Port) // out of the model's commands' reach
	s.listener = l
	s.http = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelDebug),
	}
	go func() {
		if err := s.http.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("api: serve", "error", err)
		}
	}()
	return nil
}

// URL is the address the server listens on, as a URL ("" before Listen).
func (s *Server) URL() string {
	if s.listener == nil {
		return ""
	}
	return "http://" + s.listener.Addr().String()
}

// Close stops the server: open event streams end (their turns go on).
func (s *Server) Close() {
	if s.http == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.http.Shutdown(ctx); err != nil {
		_ = s.http.Close()
	}
}

// authorized reports whether r presents the key.
func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	scheme, key, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(key)))
	return subtle.ConstantTimeCompare(sum[:], s.keySum[:]) == 1
}

// guard wraps every route: panics become 500s, bodies are bounded, and
// every route but the public ones asks for the key.
func (s *Server) guard(public func(*http.Request) bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer s.logRecover(w, r)
		setSecurityHeaders(w.Header())
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, bodyLimit(r))
		}
		if !public(r) && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="talaria"`)
			s.writeError(w, r, errorf(http.StatusUnauthorized, typeAuthentication, "invalid_api_key",
				"missing or wrong API key: send Authorization: Bearer KEY (api.key, TALARIA_API_KEY, or the file %s)", "$TALARIA_HOME/tls/api-key"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bodyLimit bounds r's body: MaxPictureBodyBytes for the requests that
// may carry pictures (a chat completion, a response, a run), MaxBodyBytes
// for every other. Pure.
func bodyLimit(r *http.Request) int64 {
	if r.Method == http.MethodPost && (r.URL.Path == "/v1/chat/completions" || r.URL.Path == "/v1/responses" || r.URL.Path == "/v1/runs") {
		return MaxPictureBodyBytes
	}
	return MaxBodyBytes
}

// setSecurityHeaders are sent with every answer.
func setSecurityHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
}
