package embedded

import (
	"cmp"
	"fmt"
	"log/slog"
	"net"

	"go.opentelemetry.io/otel/metric"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/temporal"
)

// Options configures Start. The zero value is not usable: set DataDir or
// Ephemeral.
type Options struct {
	// DataDir holds the persistence files DataDir/temporal.db (DBFileName)
	// and DataDir/visibility.db (VisibilityFileName) and a lock file. The
	// directory is created if missing; each database is created with the
	// server's schema when absent and reopened as is when present. Ignored
	// when Ephemeral is set.
	DataDir string
	// Ephemeral keeps all state in an in-memory SQLite database, for tests.
	Ephemeral bool
	// Postgres, when set, is a postgres:// DSN: the server keeps its state
	// in that database and its visibility records in the database of the
	// same name with the suffix "_visibility", creating both and their
	// schema when absent and upgrading an older schema (see postgres.go).
	// DataDir then holds only the lock file. Not with Ephemeral.
	Postgres string
	// Namespace is registered before the server starts (idempotent across
	// restarts). Default "default".
	Namespace string
	// SearchAttributes are custom search attributes (name -> type) the
	// namespace is registered with when Start creates it. A namespace that
	// exists already is left as it is (see AddSearchAttributes).
	SearchAttributes map[string]enumspb.IndexedValueType
	// IP is the frontend bind address. Default "127.0.0.1"; with Port 0 the
	// default is the process's own loopback address (see ownLoopback). The
	// history, matching and worker services always bind to that address.
	IP string
	// Port is the frontend gRPC port; 0 picks a free port.
	Port int
	// Logger receives the server's logs; tags become attributes. Default:
	// slog.Default().
	Logger *slog.Logger
	// LogLevel is the lowest level of server logs passed to Logger. Default
	// slog.LevelWarn: the server is chatty at info level.
	LogLevel slog.Leveler
	// TLS, when set, makes every port of the server require mutual TLS with
	// this credential (see TLS); nil serves plaintext to any local caller.
	TLS *TLS
	// UntunedDynamicConfig skips defaultDynamicConfig so only the server's
	// own defaults apply; for comparisons.
	UntunedDynamicConfig bool
	// NoSystemWorker leaves out Temporal's internal worker service, which
	// runs the server's own system workflows (history and task queue
	// scavengers, parent close policies of many children, batch
	// operations, namespace deletion, schedules). A short-lived process
	// that only runs its own workflows does not need it: it starts faster,
	// and stops at once, where the service's pollers, which outlive its
	// stop, hold the frontend's shutdown for its one-second drain. Work
	// for it waits in the database for the next server that runs it.
	NoSystemWorker bool
	// Meter, when set, receives the server's metrics (see metrics.go); nil
	// leaves them off.
	Meter metric.Meter
}

const (
	defaultNamespace = "default"
	defaultIP        = "127.0.0.1"
)

// withDefaults returns a copy of o with defaults filled in, or an error
// wrapping ErrInvalidOptions.
func (o Options) withDefaults() (Options, error) {
	o.Namespace = cmp.Or(o.Namespace, defaultNamespace)
	o.IP = cmp.Or(o.IP, defaultIP)
	if net.ParseIP(o.IP) == nil {
		return o, fmt.Errorf("%w: IP %q is not an IP address", ErrInvalidOptions, o.IP)
	}
	if o.Port < 0 || o.Port > 65535 {
		return o, fmt.Errorf("%w: port %d out of range", ErrInvalidOptions, o.Port)
	}
	if o.TLS != nil {
		if err := o.TLS.validate(); err != nil {
			return o, err
		}
	}
	o.Logger = cmp.Or(o.Logger, slog.Default())
	o.LogLevel = cmp.Or[slog.Leveler](o.LogLevel, slog.LevelWarn)
	return o, nil
}

// clientIP is the address local clients dial: the bind address, or loopback
// when binding to all interfaces.
func (o Options) clientIP() string {
	if ip := net.ParseIP(o.IP); ip != nil && ip.IsUnspecified() {
		if ip.To4() == nil {
			return "::1"
		}
		return "127.0.0.1"
	}
	return o.IP
}

// services are the Temporal services the server runs.
func (o Options) services() []string {
	if !o.NoSystemWorker {
		return temporal.DefaultServices
	}
	var out []string
	for _, s := range temporal.DefaultServices {
		if s != string(primitives.WorkerService) {
			out = append(out, s)
		}
	}
	return out
}
