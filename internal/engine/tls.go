package engine

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/talaria-agent/talaria/config"
)

// tlsConfig builds the TLS configuration for an external Temporal.
func tlsConfig(t config.Temporal) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.TLSServerName}
	if t.TLSCert != "" {
		pair, err := tls.LoadX509KeyPair(t.TLSCert, t.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("load temporal client certificate %s: %w", t.TLSCert, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if t.TLSCA != "" {
		pem, err := os.ReadFile(t.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("read temporal CA %s: %w", t.TLSCA, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("temporal CA %s holds no PEM certificate", t.TLSCA)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}
