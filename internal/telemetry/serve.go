package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
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

// Server is a running metrics listener.
type Server struct {
	http *http.Server
	ln   net.Listener
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
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrListen, addr, listenReason(err))
	}
	sandbox.ProtectPorts(ln.Addr().(*net.TCPAddr).Port) // out of the model's commands' reach
	s := &Server{
		http: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
			WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.logger.Warn("metrics listener stopped", "address", ln.Addr().String(), "error", err)
		}
	}()
	return s, nil
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
	return "http://" + s.ln.Addr().String() + MetricsPath
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
