package embedded

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

func newTestTLS(t *testing.T) *TLS {
	t.Helper()
	c, err := NewTLS()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTLSServerRunsWorkflows: with TLS on, the server's own services reach
// each other and a client holding the credential runs a workflow.
func TestTLSServerRunsWorkflows(t *testing.T) {
	s := startEphemeral(t, Options{TLS: newTestTLS(t)})
	c := dial(t, s)
	startWorker(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := runEcho(ctx, c, "echo-tls", "hi")
	if err != nil || out != "hi!" {
		t.Fatalf("workflow over TLS = %q, %v; want hi!", out, err)
	}
}

// TestTLSServerRefusesOtherClients: a plaintext client, a TLS client without
// a certificate and one with a certificate from another CA are refused.
func TestTLSServerRefusesOtherClients(t *testing.T) {
	cred := newTestTLS(t)
	s := startEphemeral(t, Options{TLS: cred})
	stranger := newTestTLS(t).ClientConfig()
	stranger.RootCAs = cred.pool() // trusts the server, but holds a foreign certificate
	noCert := cred.ClientConfig()
	noCert.Certificates = nil
	cases := []struct {
		name string
		tls  *tls.Config
	}{
		{"plaintext", nil},
		{"no client certificate", noCert},
		{"certificate of another CA", stranger},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			c, err := client.DialContext(ctx, client.Options{HostPort: s.HostPort(), Namespace: s.Namespace(),
				Logger: quietSDKLogger(), ConnectionOptions: client.ConnectionOptions{TLS: tc.tls}})
			if err == nil {
				c.Close()
				t.Fatal("dial succeeded; want the server to refuse the connection")
			}
		})
	}
}

// TestTLSInternalPortsRequireCertificate: the history, matching and worker
// ports refuse a TLS client without the credential's certificate.
func TestTLSInternalPortsRequireCertificate(t *testing.T) {
	cred := newTestTLS(t)
	s := startEphemeral(t, Options{TLS: cred})
	ports := map[string]int{"frontend": s.ports.frontend, "history": s.ports.history,
		"matching": s.ports.matching, "worker": s.ports.worker}
	for name, port := range ports {
		t.Run(name, func(t *testing.T) {
			addr := net.JoinHostPort(internalIP(), strconv.Itoa(port))
			if name == "frontend" {
				addr = s.HostPort()
			}
			noCert := cred.ClientConfig()
			noCert.Certificates = nil
			if err := tlsExchange(addr, noCert); err == nil || !strings.Contains(err.Error(), "certificate required") {
				t.Errorf("%s: client without a certificate got %v, want a certificate required alert", addr, err)
			}
			if err := tlsExchange(addr, cred.ClientConfig()); err != nil {
				t.Errorf("%s refused the credential: %v", addr, err)
			}
		})
	}
}

// tlsExchange completes a handshake with addr and reads what the server sends
// first (an HTTP/2 settings frame, or an alert when it refuses the client).
func tlsExchange(addr string, cfg *tls.Config) error {
	cfg.NextProtos = []string{"h2"}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	var buf [64]byte
	_, err = conn.Read(buf[:])
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil
	}
	return err
}

func TestTLSOptionValidation(t *testing.T) {
	cred := newTestTLS(t)
	cases := []struct {
		name string
		tls  *TLS
	}{
		{"no CA", &TLS{Cert: cred.Cert}},
		{"no certificate", &TLS{CA: cred.CA}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := (Options{Ephemeral: true, TLS: tc.tls}).withDefaults(); !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("withDefaults = %v, want ErrInvalidOptions", err)
			}
		})
	}
}
