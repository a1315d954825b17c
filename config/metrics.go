package config

import (
	"fmt"
	"net"
	"strconv"
)

// problems are what is wrong with m, for Validate. Pure.
func (m Metrics) problems() []string {
	if m.Listen == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(m.Listen)
	if err != nil {
		return []string{fmt.Sprintf("metrics.listen %q is not host:port (e.g. 127.0.0.1:9464, or :9464 for every interface)", m.Listen)}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return []string{fmt.Sprintf("metrics.listen %q has no valid port", m.Listen)}
	}
	return nil
}
