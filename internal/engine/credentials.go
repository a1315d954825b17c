package engine

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/talaria-agent/talaria/internal/embedded"
)

// ErrNotAuthorised means an embedded Temporal of `talaria serve` refused the
// connection because the client does not hold the serve's credential.
var ErrNotAuthorised = errors.New("talaria serve refused the connection: not authorised")

const (
	// credentialDir holds the embedded server's credential, under $TALARIA_HOME.
	credentialDir = "tls"
	// credentialFile holds, in PEM, the certificate, the CA certificate and
	// the private key: one file, so it is replaced atomically. The same path
	// serves as TLS certificate, key and CA to tools that take three.
	credentialFile = "talaria.pem"
	// credentialRenewal is how long before expiry a credential is replaced.
	credentialRenewal = 30 * 24 * time.Hour
)

// CredentialPath is the file holding the credential that opens the embedded
// Temporal of a serve running on home. Only its owner can read it.
func CredentialPath(home string) string {
	return filepath.Join(home, credentialDir, credentialFile)
}

// notAuthorised is the refusal a client on home reports.
func notAuthorised(home string) error {
	return fmt.Errorf("%w (the credential in %s is missing or wrong)", ErrNotAuthorised, CredentialPath(home))
}

// EnsureCredential returns the credential kept in home, first making one
// when it is missing, unusable or close to expiry. The directory is made
// 0700 and the file 0600.
func EnsureCredential(home string) (*embedded.TLS, error) {
	cred, err := LoadCredential(home)
	if err == nil && time.Until(cred.Cert.Leaf.NotAfter) > credentialRenewal {
		return cred, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errBadCredential) {
		return nil, err
	}
	fresh, nerr := embedded.NewTLS()
	if nerr != nil {
		return nil, fmt.Errorf("make the temporal credential: %w", nerr)
	}
	if err := writeCredential(home, fresh, errors.Is(err, fs.ErrNotExist)); err != nil {
		return nil, err
	}
	// Another process may have written its credential first: use the one
	// on disk, which is what clients will read.
	return LoadCredential(home)
}

// errBadCredential marks a credential file that cannot be used.
var errBadCredential = errors.New("unusable credential")

// LoadCredential reads the credential kept in home.
func LoadCredential(home string) (*embedded.TLS, error) {
	path := CredentialPath(home)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the temporal credential: %w", err)
	}
	cred, err := decodeCredential(data)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", errBadCredential, path, err)
	}
	return cred, nil
}

// decodeCredential parses the PEM blocks of a credential file and checks that
// the CA signed the certificate.
func decodeCredential(data []byte) (*embedded.TLS, error) {
	var certs []*x509.Certificate
	var keyDER []byte
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		switch block.Type {
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse certificate: %w", err)
			}
			certs = append(certs, c)
		case "PRIVATE KEY":
			keyDER = block.Bytes
		}
	}
	if len(certs) != 2 || keyDER == nil {
		return nil, errors.New("want a certificate, a CA certificate and a private key")
	}
	key, err := x509.ParsePKCS8PrivateKey(keyDER)
	if err != nil {
		return nil, fmt.Errorf("parse private key: %w", err)
	}
	leaf, ca := certs[0], certs[1]
	cred := &embedded.TLS{CA: ca, Cert: tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}}
	if err := verifyServerCert(cred, leaf); err != nil {
		return nil, err
	}
	return cred, nil
}

// verifyServerCert checks that cred's CA issued cert for the embedded
// server's name.
func verifyServerCert(cred *embedded.TLS, cert *x509.Certificate) error {
	_, err := cert.Verify(x509.VerifyOptions{
		Roots:     cred.ClientConfig().RootCAs,
		DNSName:   embedded.TLSServerName,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return fmt.Errorf("certificate not issued by this credential's CA: %w", err)
	}
	return nil
}

// encodeCredential writes cred as PEM: certificate, CA certificate, key.
func encodeCredential(cred *embedded.TLS) ([]byte, error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(cred.Cert.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("encode private key: %w", err)
	}
	var out []byte
	out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cred.Cert.Certificate[0]})...)
	out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cred.CA.Raw})...)
	out = append(out, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})...)
	return out, nil
}

// writeCredential stores cred in home. When fresh (no usable file existed),
// a file another process wrote meanwhile is kept; otherwise it is replaced.
func writeCredential(home string, cred *embedded.TLS, fresh bool) error {
	data, err := encodeCredential(cred)
	if err != nil {
		return err
	}
	if err := writePrivate(filepath.Join(home, credentialDir), credentialFile, data, fresh); err != nil {
		return fmt.Errorf("write the temporal credential: %w", err)
	}
	return nil
}

// writePrivate stores data as dir/name, readable by its owner only, in a
// private directory, atomically. keep: a file another process wrote
// meanwhile stays (the first writer wins); else it is replaced.
func writePrivate(dir, name string, data []byte, keep bool) error {
	if err := ensurePrivateDir(dir); err != nil {
		return err
	}
	tmp, err := writePrivateTemp(dir, name, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	path := filepath.Join(dir, name)
	if keep {
		if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil
	}
	return os.Rename(tmp, path)
}

// writePrivateTemp writes data to a new file in dir readable only by its
// owner and returns its path.
func writePrivateTemp(dir, name string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	err = errors.Join(werr, f.Chmod(0o600), f.Sync(), f.Close())
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// ensurePrivateDir creates dir (and missing parents) and makes it 0700.
func ensurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("restrict %s to its owner: %w", dir, err)
	}
	return nil
}
