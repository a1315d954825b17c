package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria"
	"github.com/talaria-agent/talaria/config"
)

// flagPprofListen is the profiling address flag of serve, worker and
// scheduler.
const flagPprofListen = "pprof-listen"

// addPprofFlag adds --pprof-listen to c.
func addPprofFlag(c *cobra.Command) {
	c.Flags().String(flagPprofListen, "",
		"serve Go's profiles at http://ADDR/debug/pprof/ (a loopback host:port, e.g. 127.0.0.1:6060; empty: off); see docs/operations.md")
}

// startPprof serves the process's profiles on --pprof-listen, when given.
func startPprof(cmd *cobra.Command, cfg config.Config) (*talaria.MetricsServer, error) {
	addr, _ := cmd.Flags().GetString(flagPprofListen)
	if addr == "" {
		return nil, nil
	}
	s, err := talaria.ServeProfiles(addr, newLogger(cfg.LogLevel))
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flagPprofListen, err)
	}
	return s, nil
}

// profilesReady is the ready line's mention of the profiles ("" when off).
func profilesReady(s *talaria.MetricsServer) string {
	if s == nil {
		return ""
	}
	return ", profiles " + s.URL()
}
