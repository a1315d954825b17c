package embedded

import (
	"net"
	"strconv"
	"time"

	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/membership/static"
	"go.temporal.io/server/common/primitives"
)

const (
	clusterName = "active"
	storeName   = "sqlite-default"
)

// ports are the gRPC ports of the four server services.
type ports struct {
	frontend, history, matching, worker int
}

// serverConfig builds the static server configuration for one node.
func serverConfig(o Options, p ports, sql *config.SQL) *config.Config {
	frontendAddr := net.JoinHostPort(o.clientIP(), strconv.Itoa(p.frontend))
	service := func(ip string, port int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: port, BindOnIP: ip}}
	}
	return &config.Config{
		Global: config.Global{
			Membership: config.Membership{
				MaxJoinDuration:  30 * time.Second,
				BroadcastAddress: internalIP(),
			},
			// PProf port 0 leaves pprof off; nil Metrics selects the no-op
			// metrics handler, so no Prometheus listener is opened.
		},
		Persistence: persistenceConfig(o, sql),
		ClusterMetadata: &cluster.Config{
			EnableGlobalNamespace:    false,
			FailoverVersionIncrement: 10,
			MasterClusterName:        clusterName,
			CurrentClusterName:       clusterName,
			ClusterInformation: map[string]cluster.ClusterInformation{
				clusterName: {
					Enabled:                true,
					InitialFailoverVersion: 1,
					RPCAddress:             frontendAddr,
				},
			},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services: map[string]config.Service{
			string(primitives.FrontendService): service(o.IP, p.frontend),
			string(primitives.HistoryService):  service(internalIP(), p.history),
			string(primitives.MatchingService): service(internalIP(), p.matching),
			string(primitives.WorkerService):   service(internalIP(), p.worker),
		},
		Archival: config.Archival{
			History:    config.HistoryArchival{State: "disabled"},
			Visibility: config.VisibilityArchival{State: "disabled"},
		},
		NamespaceDefaults: config.NamespaceDefaults{
			Archival: config.ArchivalNamespaceDefaults{
				History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
				Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
			},
		},
		// The system worker dials the frontend through this address.
		PublicClient: config.PublicClient{HostPort: frontendAddr},
	}
}

// staticHosts lists each service at its one address. Static membership
// replaces the gossip ring: no membership ports, no join wait at start, and
// nothing for two servers in one process to collide on.
func staticHosts(o Options, p ports) map[primitives.ServiceName]static.Hosts {
	addr := func(ip string, port int) static.Hosts {
		return static.SingleLocalHost(net.JoinHostPort(ip, strconv.Itoa(port)))
	}
	return map[primitives.ServiceName]static.Hosts{
		primitives.FrontendService: addr(o.clientIP(), p.frontend),
		primitives.HistoryService:  addr(internalIP(), p.history),
		primitives.MatchingService: addr(internalIP(), p.matching),
		primitives.WorkerService:   addr(internalIP(), p.worker),
	}
}

// allocatePorts picks the service ports; the frontend port is o.Port when set.
func allocatePorts(o Options) (ports, error) {
	var p ports
	var err error
	if o.Port != 0 {
		if err := checkBindable(o.IP, o.Port); err != nil {
			return p, err
		}
		p.frontend = o.Port
	} else if p.frontend, err = freePort(o.IP); err != nil {
		return p, err
	}
	for _, dst := range []*int{&p.history, &p.matching, &p.worker} {
		if *dst, err = freePort(internalIP()); err != nil {
			return p, err
		}
	}
	return p, nil
}
