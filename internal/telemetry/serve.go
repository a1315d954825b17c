package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/talaria-agent/talaria/internal/sandbox"
)

// MetricsPath is the one path the metrics listener answers.
const MetricsPath = "/metrics"

// ErrListen marks a metrics address that cannot be listened on (taken,
// not allowed, not an address).
var ErrListen = errors.New("metrics listener")

// Handler answers GET and HEAD of MetricsPath with the registry in the
// Prometheus text format, and everything else with 404 or 405. A collector
// that fails leaves its series out; the rest are served. Nil when metrics
// are off.
func (t *Telemetry) Handler() http.Handler {
	if !t.MetricsOn() {
		return nil
	}
	metrics := promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		ErrorLog:            promLogger{t.logger},
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != MetricsPath {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		metrics.ServeHTTP(w, r)
	})
}

// promLogger passes promhttp's errors to slog.
type promLogger struct{ l *slog.Logger }

func (p promLogger) Println(v ...any) { p.l.Warn("metrics: " + fmt.Sprint(v...)) }

// Server is a running metrics (or profiles) listener.
type Server struct {
	http *http.Server
	ln   net.Listener
	path string // what URL names
	done chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// Serve listens on addr (host:port; port 0 picks a free one) and serves
// Handler there until Close. An address that cannot be listened on is an
// error wrapping ErrListen, said in one line.
func (t *Telemetry) Serve(addr string) (*Server, error) {
	h := t.Handler()
	if h == nil {
		return nil, fmt.Errorf("%w: metrics are off", ErrListen)
	}
	return serve(addr, h, MetricsPath, 30*time.Second, t.logger)
}

// serve listens on addr and serves h there until Close, out of the reach
// of the model's commands.
func serve(addr string, h http.Handler, path string, writeTimeout time.Duration, logger *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrListen, addr, listenReason(err))
	}
	sandbox.ProtectPorts(ln.Addr().(*net.TCPAddr).Port)
	s := &Server{
		http: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
			WriteTimeout: writeTimeout, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10},
		ln:   ln,
		path: path,
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("listener stopped", "address", ln.Addr().String(), "error", err)
		}
	}()
	return s, nil
}

// ProfilesPath is where the profiles listener serves Go's profiles.
const ProfilesPath = "/debug/pprof/"

// ServeProfiles serves Go's runtime profiles (net/http/pprof) at
// http://addr/debug/pprof/ until Close. Only a loopback address is taken:
// a profile shows the process's memory, and the endpoint asks for no
// credential. A CPU profile or trace may take up to a few minutes.
func ServeProfiles(addr string, logger *slog.Logger) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrListen, addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%w: %s: profiles show the process's memory, so only a loopback address (127.0.0.1, ::1, localhost) is taken", ErrListen, addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(ProfilesPath, pprof.Index)
	mux.HandleFunc(ProfilesPath+"cmdline", pprof.Cmdline)
	mux.HandleFunc(ProfilesPath+"profile", pprof.Profile)
	mux.HandleFunc(ProfilesPath+"symbol", pprof.Symbol)
	mux.HandleFunc(ProfilesPath+"trace", pprof.Trace)
	return serve(addr, mux, ProfilesPath, 5*time.Minute, logger)
}

// listenReason is why a listen failed, in a few words. Pure.
func listenReason(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

// URL is where the metrics are read, e.g. http://127.0.0.1:9464/metrics.
func (s *Server) URL() string {
	if s == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String() + s.path
}

// Close stops the listener, waiting a few seconds for scrapes in flight.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		s.closeErr = s.http.Shutdown(ctx)
		if errors.Is(s.closeErr, context.DeadlineExceeded) {
			// A connection still busy (or opened and never used: Shutdown
			// waits 5 s for those) is cut: a scrape can be asked again.
			s.closeErr = s.http.Close()
		}
		<-s.done
	})
	return s.closeErr
}
