package embedded

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"time"

	"go.temporal.io/server/common/rpc/encryption"
)

// TLSServerName is the name every certificate of an embedded server is
// issued for and verified against, whatever address a client dials.
const TLSServerName = "localhost"

// TLS is the mutual-TLS credential of an embedded server. With it, every
// gRPC port of the server (the frontend and the history, matching and worker
// services) accepts only connections that present a certificate signed by
// CA; the server's own services present Cert to each other, and clients
// present it (or another certificate CA signed) to the frontend.
type TLS struct {
	// Cert is the certificate and private key the server presents, as a
	// server and as a client of its own services. It must be valid for
	// TLSServerName and for both server and client authentication.
	Cert tls.Certificate
	// CA verifies every peer's certificate.
	CA *x509.Certificate
}

// validate reports a TLS credential that cannot be used.
func (t *TLS) validate() error {
	if t.CA == nil {
		return fmt.Errorf("%w: TLS has no CA certificate", ErrInvalidOptions)
	}
	if len(t.Cert.Certificate) == 0 || t.Cert.PrivateKey == nil {
		return fmt.Errorf("%w: TLS has no certificate and key", ErrInvalidOptions)
	}
	return nil
}

func (t *TLS) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(t.CA)
	return p
}

// ClientConfig is the TLS configuration with which a client presents the
// credential to the server and verifies the server's certificate.
func (t *TLS) ClientConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		ServerName:   TLSServerName,
		Certificates: []tls.Certificate{t.Cert},
		RootCAs:      t.pool(),
	}
}

// ServerConfig is the TLS configuration of every server port: it presents
// the certificate and refuses a client without a certificate CA signed.
func (t *TLS) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{t.Cert},
		ClientCAs:    t.pool(),
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}
}

// provider hands the server the same credential for the frontend, the
// internal services and the server's own clients of both.
func (t *TLS) provider(hosts ...string) encryption.TLSConfigProvider {
	remote := map[string]*tls.Config{}
	for _, h := range hosts {
		remote[h] = t.ClientConfig()
	}
	return &encryption.FixedTLSConfigProvider{
		InternodeServerConfig:      t.ServerConfig(),
		InternodeClientConfig:      t.ClientConfig(),
		FrontendServerConfig:       t.ServerConfig(),
		FrontendClientConfig:       t.ClientConfig(),
		RemoteClusterClientConfigs: remote,
	}
}

// TLSOrganization names the issuer of every certificate NewTLS makes, so a
// client can tell an embedded Talaria server from another TLS server.
const TLSOrganization = "Talaria embedded Temporal"

// tlsValidity is how long NewTLS certificates are valid.
const tlsValidity = 10 * 365 * 24 * time.Hour

// NewTLS makes a fresh credential: a CA and one certificate it signs, for
// TLSServerName, 127.0.0.1 and ::1, for server and client authentication.
// Keys are ECDSA P-256; the CA key is not kept.
func NewTLS() (*TLS, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now().Add(-time.Hour)
	caTmpl := certTemplate(now, "Talaria local CA")
	caTmpl.IsCA = true
	caTmpl.BasicConstraintsValid = true
	caTmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	ca, err := signCert(caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	leafTmpl := certTemplate(now, "talaria serve")
	leafTmpl.KeyUsage = x509.KeyUsageDigitalSignature
	leafTmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	leafTmpl.DNSNames = []string{TLSServerName}
	leafTmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	leaf, err := signCert(leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create certificate: %w", err)
	}
	return &TLS{CA: ca, Cert: tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}}, nil
}

func certTemplate(notBefore time.Time, name string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{Organization: []string{TLSOrganization}, CommonName: name},
		NotBefore:    notBefore,
		NotAfter:     notBefore.Add(tlsValidity),
	}
}

func signCert(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) (*x509.Certificate, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}
