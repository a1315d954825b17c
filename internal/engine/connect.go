package engine

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/embedded"
	"github.com/talaria-agent/talaria/models"
)

const (
	// dialTimeout bounds a connection to Temporal.
	dialTimeout = 10 * time.Second
	// probeTimeout bounds the look at a frontend's TLS certificate.
	probeTimeout = 2 * time.Second
)

// Connect makes a client-only Runtime for a running `talaria serve`: its
// Temporal and its database, as it published them.
func Connect(ctx context.Context, cfg config.Config, info ServeInfo, logger *slog.Logger) (rt *Runtime, err error) {
	logger = cmp.Or(logger, slog.Default())
	cfg.Temporal.Address = info.TemporalAddress
	cfg.Temporal.Namespace = info.Namespace
	cfg.DB = info.DB
	rt = &Runtime{Config: cfg, logger: logger}
	defer func() {
		if err != nil {
			rt.Close()
			rt = nil
		}
	}()
	// The serve created its store: a client never creates one (a store
	// removed under the serve must not come back empty).
	if rt.Store, err = models.OpenExisting(ctx, info.DB); err != nil {
		return nil, fmt.Errorf("open the database of talaria serve (pid %d): %w", info.PID, err)
	}
	if info.Credential {
		rt.Client, err = dialServe(ctx, cfg.Temporal, cfg.Home, nil, logger)
	} else {
		rt.Client, err = Dial(ctx, cfg.Temporal, cfg.Home, logger)
	}
	if err != nil {
		return nil, fmt.Errorf("talaria serve (pid %d): %w", info.PID, err)
	}
	return rt, nil
}

// Dial connects a Temporal client to t.Address, failing with a clear error
// when nothing answers there within a few seconds. home is the client's
// $TALARIA_HOME: when t configures no TLS and no API key and the address is
// a loopback one, it may be the embedded Temporal of a `talaria serve`, which
// admits only clients presenting the credential kept in home.
func Dial(ctx context.Context, t config.Temporal, home string, logger *slog.Logger, extra ...ClientOption) (client.Client, error) {
	configured := t.TLS() || t.APIKey != ""
	if !configured && isLoopback(t.Address) {
		if cert := serveCertificate(ctx, t.Address); cert != nil {
			return dialServe(ctx, t, home, cert, logger, extra...)
		}
	}
	var tlsCfg *tls.Config
	if t.TLS() {
		var err error
		if tlsCfg, err = tlsConfig(t); err != nil {
			return nil, err
		}
	}
	c, err := dial(ctx, t, tlsCfg, logger, extra...)
	if err != nil && serveCertificate(ctx, t.Address) != nil {
		// The configured TLS identity is not the serve's credential.
		return nil, fmt.Errorf("%w: %w", notAuthorised(home), err)
	}
	return c, err
}

// dialServe connects to the embedded Temporal of a serve with the credential
// kept in home. When serverCert is known, the credential must have issued it.
func dialServe(ctx context.Context, t config.Temporal, home string, serverCert *x509.Certificate, logger *slog.Logger, extra ...ClientOption) (client.Client, error) {
	cred, err := LoadCredential(home)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", notAuthorised(home), err)
	}
	if serverCert != nil {
		if err := verifyServerCert(cred, serverCert); err != nil {
			return nil, fmt.Errorf("%w: %w", notAuthorised(home), err)
		}
	}
	t.APIKey = ""
	return dial(ctx, t, cred.ClientConfig(), logger, extra...)
}

// dial connects with tlsCfg (nil: plaintext) and t's API key, if any;
// extra adjust the client's options (metrics, interceptors).
func dial(ctx context.Context, t config.Temporal, tlsCfg *tls.Config, logger *slog.Logger, extra ...ClientOption) (client.Client, error) {
	opts := clientOptions(t, tlsCfg, logger, extra...)
	dialCtx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := client.DialContext(dialCtx, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to temporal at %s (namespace %s): %w", t.Address, t.Namespace, err)
	}
	return c, nil
}

// clientOptions are dial's client options. Requests are gzip-compressed (the
// SDK's default) except on loopback, where compressing costs CPU on both
// ends and saves nothing.
func clientOptions(t config.Temporal, tlsCfg *tls.Config, logger *slog.Logger, extra ...ClientOption) client.Options {
	opts := client.Options{
		HostPort:          t.Address,
		Namespace:         t.Namespace,
		Logger:            sdklog.NewStructuredLogger(quiet(logger)),
		ConnectionOptions: client.ConnectionOptions{TLS: tlsCfg},
	}
	if isLoopback(t.Address) {
		opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	if t.APIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(t.APIKey)
	}
	for _, o := range extra {
		o(&opts)
	}
	return opts
}

// isLoopback reports whether address (host:port) names this machine's
// loopback interface, where a serve's embedded frontend listens.
func isLoopback(address string) bool {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveCertificate returns the certificate the server at address presents
// when it is the embedded Temporal of a `talaria serve`, else nil. It only
// looks at the certificate: nothing is sent over the connection.
func serveCertificate(ctx context.Context, address string) *x509.Certificate {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{
		MinVersion: tls.VersionTLS13,
		ServerName: embedded.TLSServerName,
		NextProtos: []string{"h2"},
		// The certificate is identified below and verified against the
		// client's own credential before any request is made.
		InsecureSkipVerify: true, //nolint:gosec
	}}
	conn, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 || !slices.Contains(certs[0].Issuer.Organization, embedded.TLSOrganization) {
		return nil
	}
	return certs[0]
}

// CheckTemporal asks a Temporal for its health: the running serve's (info,
// when serving) or the external one cfg names.
func CheckTemporal(ctx context.Context, cfg config.Config, info ServeInfo, serving bool) error {
	quiet := slog.New(slog.DiscardHandler)
	if serving {
		rt, err := Connect(ctx, cfg, info, quiet)
		if err != nil {
			return err
		}
		defer rt.Close()
		_, err = rt.Client.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err
	}
	c, err := Dial(ctx, cfg.Temporal, cfg.Home, quiet)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
	return err
}
