package config

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// MinAPIKeyLen is the shortest api.key accepted: a key a person could
// guess is no key.
const MinAPIKeyLen = 16

// API configure the HTTP API (serve --api-listen, talaria api).
type API struct {
	// Listen is the host:port the API and its web page are served on
	// (empty: no API).
	Listen string `yaml:"listen"`
	// Key is the bearer key clients present (Authorization: Bearer KEY).
	// Empty: a key is made and kept in $TALARIA_HOME/tls/api-key, which
	// only a loopback listener may use; any other address needs this key.
	Key string `yaml:"key"`
	// Workdir is the directory the API's turns resolve relative paths
	// against (empty: the directory the process started in).
	Workdir string `yaml:"workdir"`
}

// problems are what is wrong with a, for Validate. Pure.
func (a API) problems() []string {
	var out []string
	if a.Listen != "" {
		_, port, err := net.SplitHostPort(a.Listen)
		if err != nil {
			out = append(out, fmt.Sprintf("api.listen %q is not host:port (e.g. 127.0.0.1:8642)", a.Listen))
		} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			out = append(out, fmt.Sprintf("api.listen %q has no valid port", a.Listen))
		}
	}
	if a.Key != strings.TrimSpace(a.Key) {
		out = append(out, "api.key begins or ends with white space, which no client sends: remove it")
	}
	if a.Key != "" && len(a.Key) < MinAPIKeyLen {
		out = append(out, fmt.Sprintf("api.key is too short: use at least %d characters (e.g. openssl rand -hex 24)", MinAPIKeyLen))
	}
	return out
}

// Loopback reports whether listen names only this machine: 127.0.0.0/8,
// ::1 or localhost. An empty host (every interface) is not loopback.
func Loopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
