package embedded

import (
	"cmp"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	"github.com/temporalio/ui-server/v2/server/csrf"
	"github.com/temporalio/ui-server/v2/server/route"
	uiassets "github.com/temporalio/ui-server/v2/ui"

	"github.com/talaria-agent/talaria/internal/sandbox"
)

// ErrUIPortUnavailable reports that the Web UI's address cannot be bound.
var ErrUIPortUnavailable = errors.New("embedded: web UI port unavailable")

// UIOptions configures StartUI.
type UIOptions struct {
	// IP is the address the UI listens on. Default: the frontend's host
	// (127.0.0.1 for a frontend on the process's own loopback address).
	IP string
	// Port is the UI's HTTP port; 0 picks a free one.
	Port int
	// Token is the secret a browser presents once (?token=...) to receive
	// the session cookie; every request without the cookie is refused.
	// It must be at least MinUITokenLen characters.
	Token string
	// Logger receives the UI server's errors. Default: slog.Default().
	Logger *slog.Logger
}

// UI is the Temporal Web UI of an embedded server, served behind a guard
// that admits only holders of its token.
type UI struct {
	http  *http.Server
	ln    net.Listener
	base  string
	token string
	open  bool // listens beyond loopback
	done  chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// StartUI serves the Temporal Web UI for s on o.IP:o.Port. The UI server
// talks to the frontend with s's credential, so it reaches nothing a holder
// of that credential could not; its own port admits only browsers that
// presented o.Token (see guard). Nothing listens unguarded: the UI's
// handler is mounted directly behind the guard on one listener.
func (s *Server) StartUI(ctx context.Context, o UIOptions) (*UI, error) {
	o, err := s.uiDefaults(o)
	if err != nil {
		return nil, err
	}
	cfg, err := s.uiConfig(o)
	if err != nil {
		return nil, err
	}
	h, err := uiHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("web UI: %w", err)
	}
	addr := net.JoinHostPort(o.IP, strconv.Itoa(o.Port))
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUIPortUnavailable, addr, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	sandbox.ProtectPorts(port)
	u := &UI{
		ln:    ln,
		open:  !net.ParseIP(o.IP).IsLoopback(),
		base:  "http://" + s.uiHost(ln.Addr()) + "/",
		token: o.Token,
		done:  make(chan struct{}),
		http: &http.Server{
			Handler:           newGuard(o.Token, port, h),
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug),
		},
	}
	if w := u.Warning(); w != "" {
		o.Logger.Warn(w, "address", ln.Addr().String())
	}
	go func() {
		defer close(u.done)
		if err := u.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.Logger.Warn("web UI stopped", "error", err)
		}
	}()
	return u, nil
}

// uiHost is the host:port a local browser opens for a listener on addr:
// loopback (the frontend's client address) when it listens on all
// interfaces.
func (s *Server) uiHost(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return addr.String()
	}
	host, _, err := net.SplitHostPort(s.hostPort)
	if err != nil {
		return addr.String()
	}
	return net.JoinHostPort(host, strconv.Itoa(tcp.Port))
}

// uiDefaults fills in o's defaults and checks it.
func (s *Server) uiDefaults(o UIOptions) (UIOptions, error) {
	if o.IP == "" {
		host, _, err := net.SplitHostPort(s.hostPort)
		if err != nil {
			return o, fmt.Errorf("%w: frontend address %q: %w", ErrInvalidOptions, s.hostPort, err)
		}
		o.IP = host
		if host == internalIP() {
			// A frontend on the process's own loopback address (no port
			// was asked for) still has its UI where people look.
			o.IP = defaultIP
		}
	}
	if net.ParseIP(o.IP) == nil {
		return o, fmt.Errorf("%w: UI IP %q is not an IP address", ErrInvalidOptions, o.IP)
	}
	if o.Port < 0 || o.Port > 65535 {
		return o, fmt.Errorf("%w: UI port %d out of range", ErrInvalidOptions, o.Port)
	}
	if len(o.Token) < MinUITokenLen {
		return o, fmt.Errorf("%w: UI token shorter than %d characters", ErrInvalidOptions, MinUITokenLen)
	}
	o.Logger = cmp.Or(o.Logger, slog.Default())
	return o, nil
}

// uiConfig is the UI server's configuration for s: the frontend with s's
// credential (verified as TLSServerName), the namespace, no outbound calls
// (news, version checks), write actions as o says.
func (s *Server) uiConfig(o UIOptions) (*uiconfig.Config, error) {
	cfg := &uiconfig.Config{
		TemporalGRPCAddress: s.hostPort,
		EnableUI:            true,
		DefaultNamespace:    s.namespace,
		DisableNewsFetch:    true,
		NotifyOnNewVersion:  false,
		HideLogs:            true,
		Distribution:        "talaria",
		DisableWriteActions: true,
		// The guard's cookie is SameSite=Strict; the UI's CSRF cookie
		// travels over the same plain-HTTP loopback connection.
		CORS: uiconfig.CORS{CookieInsecure: true},
	}
	cfg.WorkflowTerminateDisabled, cfg.WorkflowCancelDisabled = true, true
	cfg.WorkflowSignalDisabled, cfg.WorkflowUpdateDisabled = true, true
	cfg.WorkflowResetDisabled, cfg.WorkflowPauseDisabled = true, true
	cfg.BatchActionsDisabled, cfg.StartWorkflowDisabled = true, true
	cfg.ActivityCommandsDisabled = true
	if s.tls != nil {
		t, err := uiTLS(s.tls)
		if err != nil {
			return nil, err
		}
		cfg.TLS = t
	}
	return cfg, nil
}

// uiTLS encodes the credential as the UI server's client TLS settings.
func uiTLS(t *TLS) (uiconfig.TLS, error) {
	key, err := x509.MarshalPKCS8PrivateKey(t.Cert.PrivateKey)
	if err != nil {
		return uiconfig.TLS{}, fmt.Errorf("web UI: encode the credential's key: %w", err)
	}
	enc := func(kind string, der []byte) string {
		return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}))
	}
	return uiconfig.TLS{
		CertData:               enc("CERTIFICATE", t.Cert.Certificate[0]),
		KeyData:                enc("PRIVATE KEY", key),
		CaData:                 enc("CERTIFICATE", t.CA.Raw),
		ServerName:             TLSServerName,
		EnableHostVerification: true,
	}, nil
}

// staticConfig hands the UI server one fixed configuration.
type staticConfig struct{ cfg *uiconfig.Config }

func (p staticConfig) GetConfig() (*uiconfig.Config, error) { return p.cfg, nil }

// uiHandler assembles the UI server's routes (API proxy to the frontend,
// settings, health, the UI's assets) on one echo instance, which is an
// http.Handler the guard can wrap. It mirrors what the UI server's own
// constructor mounts, minus the listener, request logging, CORS for other
// origins and single sign-on, none of which Talaria uses.
func uiHandler(cfg *uiconfig.Config) (http.Handler, error) {
	provider, err := uiconfig.NewConfigProviderWithRefresh(staticConfig{cfg})
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	e.Use(middleware.Recover())
	e.Use(middleware.Gzip())
	e.Use(middleware.Secure())
	secure := !cfg.CORS.CookieInsecure
	e.Use(csrf.EnsureTokenCookie(secure))
	e.Use(middleware.CSRFWithConfig(csrf.MiddlewareConfig(provider, secure)))
	route.SetHealthRoute(e)
	if err := route.SetAPIRoutes(e, provider, nil); err != nil {
		return nil, err
	}
	assets, err := uiassets.Assets()
	if err != nil {
		return nil, fmt.Errorf("assets: %w", err)
	}
	if assets, err = fs.Sub(assets, "local"); err != nil {
		return nil, fmt.Errorf("assets: %w", err)
	}
	if err := route.SetUIRoutes(e, "", assets, provider); err != nil {
		return nil, fmt.Errorf("routes: %w", err)
	}
	route.SetRenderRoute(e, "")
	return e, nil
}

// Warning is one line for the operator when the UI listens beyond
// loopback, where its token and cookie cross the network over plain HTTP;
// "" otherwise.
func (u *UI) Warning() string {
	if !u.open {
		return ""
	}
	return "web UI on " + u.ln.Addr().String() + " is plain HTTP beyond this machine: its token and cookie cross the network unencrypted; bind it to loopback or put a TLS proxy in front"
}

// URL is the UI's address, e.g. "http://127.0.0.1:8233/".
func (u *UI) URL() string { return u.base }

// LoginURL is URL with the token: opening it once lets a browser in.
func (u *UI) LoginURL() string {
	return u.base + "?" + url.Values{tokenParam: {u.token}}.Encode()
}

// Close stops the UI's listener and waits for its server to return.
// Safe to call more than once.
func (u *UI) Close() error {
	if u == nil {
		return nil
	}
	u.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := u.http.Shutdown(ctx); err != nil {
			u.closeErr = errors.Join(fmt.Errorf("stop web UI: %w", err), u.http.Close())
		}
		<-u.done
	})
	return u.closeErr
}
