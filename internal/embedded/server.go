package embedded

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"

	"github.com/talaria-agent/talaria/internal/sandbox"
)

const (
	// defaultStartTimeout bounds Start when ctx has no deadline.
	defaultStartTimeout = 2 * time.Minute
	// readyPoll is the pause between readiness probes.
	readyPoll = 20 * time.Millisecond
)

// Server is a running embedded Temporal server.
type Server struct {
	srv       temporal.Server
	hostPort  string
	ports     ports
	namespace string
	tls       *TLS
	lock      *dirLock
	pgLock    *pgLock // with Options.Postgres: the database's server lock
	log       *slog.Logger

	stopOnce sync.Once
	stopErr  error
}

// Start launches the server and returns once the frontend accepts requests
// and the namespace is usable. If ctx ends first, the server is stopped and
// the error wraps ErrNotReady (or the failing step's error).
func Start(ctx context.Context, opts Options) (*Server, error) {
	began := time.Now()
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.Port == 0 && o.IP == defaultIP {
		o.IP = internalIP()
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	s := &Server{namespace: o.Namespace, tls: o.TLS, log: slog.New(&minLevelHandler{min: o.LogLevel, next: temporalHandler(o.Logger)})}

	sqlCfg, err := s.prepareStorage(ctx, o)
	if err != nil {
		return nil, errors.Join(err, s.lock.release(), s.pgLock.release())
	}
	srv, p, err := s.newTemporal(o, sqlCfg)
	if err != nil {
		return nil, errors.Join(err, s.lock.release(), s.pgLock.release())
	}
	s.srv = srv
	s.ports = p
	s.hostPort = net.JoinHostPort(o.clientIP(), strconv.Itoa(p.frontend))

	if err := srv.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("start temporal server: %w", err), s.Stop())
	}
	if err := s.waitReady(ctx); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	o.Logger.LogAttrs(ctx, slog.LevelDebug, "embedded temporal server ready",
		slog.String("address", s.hostPort), slog.String("namespace", s.namespace),
		slog.Bool("ephemeral", o.Ephemeral), slog.Duration("took", time.Since(began)))
	return s, nil
}

// prepareStorage readies the database (and, in file mode, the data directory
// and its lock) and registers the namespace in it.
func (s *Server) prepareStorage(ctx context.Context, o Options) (*config.SQL, error) {
	var dbPath string
	if !o.Ephemeral {
		dir, err := prepareDataDir(o.DataDir)
		if err != nil {
			return nil, err
		}
		if s.lock, err = lockDataDir(dir); err != nil {
			return nil, err
		}
		dbPath = filepath.Join(dir, DBFileName)
		exists, err := dbExists(dbPath)
		if err != nil {
			return nil, err
		}
		if o.Postgres == "" {
			oldMain := dbPath
			if !exists {
				if err := createDatabase(ctx, dbPath, writeMainSchema); err != nil {
					return nil, fmt.Errorf("create database %s: %w", dbPath, err)
				}
				oldMain = ""
			}
			if err := prepareVisibility(ctx, dir, oldMain, o.Logger); err != nil {
				return nil, err
			}
			if err := dropOldVisibility(ctx, dbPath); err != nil {
				return nil, err
			}
		}
	}
	sqlCfg, err := sqlConfig(o.Ephemeral, dbPath)
	if err == nil && o.Postgres != "" {
		sqlCfg, s.pgLock, err = preparePostgres(ctx, o)
	}
	if err != nil {
		return nil, err
	}
	// Writing the namespace row before the server starts makes it part of the
	// server's first namespace cache load, so it is usable as soon as the
	// frontend answers. Existing namespaces are left untouched.
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, o.Namespace, false, o.SearchAttributes)
	if err != nil {
		return nil, fmt.Errorf("namespace %q: %w", o.Namespace, err)
	}
	if err := sqliteschema.CreateNamespaces(sqlCfg, ns); err != nil {
		return nil, fmt.Errorf("register namespace %q: %w", o.Namespace, err)
	}
	return sqlCfg, nil
}

func (s *Server) newTemporal(o Options, sqlCfg *config.SQL) (temporal.Server, ports, error) {
	p, err := allocatePorts(o)
	if err != nil {
		return nil, p, err
	}
	// No command the model runs may reach the server's services, even with
	// the sandbox's network on.
	sandbox.ProtectPorts(p.frontend, p.history, p.matching, p.worker)
	srv, err := temporal.NewServer(append(serverOptions(o, p, sqlCfg), tlsOptions(o)...)...)
	if err != nil {
		return nil, p, fmt.Errorf("create temporal server: %w", err)
	}
	return srv, p, nil
}

// serverOptions are the options of every embedded server.
func serverOptions(o Options, p ports, sqlCfg *config.SQL) []temporal.ServerOption {
	return []temporal.ServerOption{
		temporal.WithConfig(serverConfig(o, p, sqlCfg)),
		temporal.ForServices(o.services()),
		temporal.WithStaticHosts(staticHosts(o, p)),
		temporal.WithLogger(newSlogLogger(o.Logger, o.LogLevel)),
		temporal.WithDynamicConfigClient(buildDynamicConfig(o.UntunedDynamicConfig)),
		temporal.WithCustomMetricsHandler(serverMetrics(o)),
		temporal.WithAuthorizer(authorization.NewNoopAuthorizer()),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper {
			return authorization.NewNoopClaimMapper()
		}),
	}
}

// tlsOptions secure every port with o.TLS, when set. Authorization stays a
// no-op: holding the credential is what authorises a caller.
func tlsOptions(o Options) []temporal.ServerOption {
	if o.TLS == nil {
		return nil
	}
	return []temporal.ServerOption{temporal.WithTLSConfigFactory(
		o.TLS.provider(o.clientIP(), internalIP(), TLSServerName))}
}

// waitReady polls the frontend until it is healthy and describes the
// namespace, or ctx ends.
func (s *Server) waitReady(ctx context.Context) error {
	c, err := client.NewLazyClient(client.Options{
		HostPort:          s.hostPort,
		Namespace:         s.namespace,
		Logger:            sdklog.NewStructuredLogger(s.log),
		ConnectionOptions: client.ConnectionOptions{TLS: s.ClientTLS(), GrpcCompression: &client.GrpcCompressionNone{}},
	})
	if err != nil {
		return fmt.Errorf("readiness client: %w", err)
	}
	defer c.Close()
	var last error
	for {
		last = probe(ctx, c, s.namespace)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w at %s: %w (last probe: %w)", ErrNotReady, s.hostPort, ctx.Err(), last)
		case <-time.After(readyPoll):
		}
	}
}

func probe(ctx context.Context, c client.Client, namespace string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	if _, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{
		Namespace: namespace,
	}); err != nil {
		return fmt.Errorf("describe namespace: %w", err)
	}
	return nil
}

// HostPort is the frontend address for clients, e.g. "127.0.0.1:7233".
func (s *Server) HostPort() string { return s.hostPort }

// ClientTLS is the TLS configuration a client needs to connect, or nil when
// the server runs without TLS.
func (s *Server) ClientTLS() *tls.Config {
	if s.tls == nil {
		return nil
	}
	return s.tls.ClientConfig()
}

// Namespace is the namespace registered at start.
func (s *Server) Namespace() string { return s.namespace }

// Stop shuts the server down and releases the data directory. It is safe to
// call more than once; later calls return the first call's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		var errs []error
		if s.srv != nil {
			if err := s.srv.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("stop temporal server: %w", err))
			}
		}
		if err := s.lock.release(); err != nil {
			errs = append(errs, fmt.Errorf("release data dir lock: %w", err))
		}
		if err := s.pgLock.release(); err != nil {
			errs = append(errs, fmt.Errorf("release database lock: %w", err))
		}
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}
