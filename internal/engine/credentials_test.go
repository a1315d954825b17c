package engine

import (
	"context"
	"encoding/pem"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/embedded"
)

func TestEnsureCredentialMakesPrivateFileOnce(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	first, err := EnsureCredential(home)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{
		filepath.Dir(CredentialPath(home)): 0o700,
		CredentialPath(home):               0o600,
	} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s has mode %v, want %v", path, got, want)
		}
	}
	again, err := EnsureCredential(home)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cert.Leaf.Equal(first.Cert.Leaf) {
		t.Error("a second start made a new credential; want the existing one kept")
	}
}

func TestLoadCredentialErrors(t *testing.T) {
	t.Parallel()
	one, err := embedded.NewTLS()
	if err != nil {
		t.Fatal(err)
	}
	other, err := embedded.NewTLS()
	if err != nil {
		t.Fatal(err)
	}
	mixed := &embedded.TLS{CA: other.CA, Cert: one.Cert}
	cases := []struct {
		name  string
		write func(home string) error
		want  error
	}{
		{"missing", func(string) error { return nil }, fs.ErrNotExist},
		{"garbage", func(home string) error { return writeRaw(home, []byte("not pem")) }, errBadCredential},
		{"certificate of another CA", func(home string) error { return writeCredential(home, mixed, true) }, errBadCredential},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			if err := tc.write(home); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadCredential(home); !errors.Is(err, tc.want) {
				t.Fatalf("LoadCredential = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestEnsureCredentialReplacesUnusableFile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := writeRaw(home, []byte("not pem")); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureCredential(home); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCredential(home); err != nil {
		t.Fatalf("after EnsureCredential: %v", err)
	}
}

func writeRaw(home string, data []byte) error {
	if err := ensurePrivateDir(filepath.Dir(CredentialPath(home))); err != nil {
		return err
	}
	return os.WriteFile(CredentialPath(home), data, 0o600)
}

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"127.0.0.1:7233": true, "[::1]:7233": true, "localhost:7233": true, "127.0.0.2:1": true,
		"10.0.0.1:7233": false, "temporal.example.com:7233": false, "127.0.0.1": false, "": false,
	}
	for addr, want := range cases {
		if got := isLoopback(addr); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestClientCompression: gzip (the SDK's default, nil) for a remote
// server, none on loopback.
func TestClientCompression(t *testing.T) {
	t.Parallel()
	for addr, loopback := range map[string]bool{"127.0.33.9:7233": true, "localhost:7233": true, "temporal.example.com:7233": false} {
		got := clientOptions(config.Temporal{Address: addr}, nil, slog.New(slog.DiscardHandler)).ConnectionOptions.GrpcCompression
		if _, none := got.(*client.GrpcCompressionNone); none != loopback || (!loopback && got != nil) {
			t.Errorf("%s: compression %#v", addr, got)
		}
	}
}

// TestDialEmbeddedNeedsCredential: a client whose home holds the serve's
// credential connects to its address; one whose home holds none, or another
// serve's, is refused with the path of the missing credential.
func TestDialEmbeddedNeedsCredential(t *testing.T) {
	t.Parallel()
	owner := t.TempDir()
	cred, err := EnsureCredential(owner)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	srv, err := embedded.Start(ctx, embedded.Options{Ephemeral: true, TLS: cred})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	otherServe := t.TempDir()
	if _, err := EnsureCredential(otherServe); err != nil {
		t.Fatal(err)
	}
	// What any local user can fetch: the certificate the server presents.
	serverCertFile := filepath.Join(t.TempDir(), "server.pem")
	if err := os.WriteFile(serverCertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cred.Cert.Leaf.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	files := func(cert, ca string) config.Temporal {
		return config.Temporal{TLSCert: cert, TLSKey: cert, TLSCA: ca, TLSServerName: embedded.TLSServerName}
	}
	cases := []struct {
		name    string
		home    string
		tls     config.Temporal // TLS configured by the user
		refused string          // what the error says besides the refusal
	}{
		{"owner", owner, config.Temporal{}, ""},
		{"credential file as TLS configuration", t.TempDir(), files(CredentialPath(owner), CredentialPath(owner)), ""},
		{"no credential", t.TempDir(), config.Temporal{}, "no such file"},
		{"another serve's credential", otherServe, config.Temporal{}, "not issued by"},
		{"another serve's credential as TLS configuration", t.TempDir(),
			files(CredentialPath(otherServe), CredentialPath(otherServe)), "unknown authority"},
		// The server itself refuses a client that trusts it but holds no
		// certificate, or one another CA signed (the TLS alert it sends may
		// arrive as a broken connection).
		{"TLS without a client certificate", t.TempDir(), files("", serverCertFile), "connect to temporal at"},
		{"TLS with a certificate of another CA", t.TempDir(), files(CredentialPath(otherServe), serverCertFile), "connect to temporal at"},
	}
	logger := slog.New(slog.DiscardHandler)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tc := c.tls
			tc.Address, tc.Namespace = srv.HostPort(), srv.Namespace()
			cl, err := Dial(ctx, tc, c.home, logger)
			if c.refused == "" {
				if err != nil {
					t.Fatalf("Dial: %v", err)
				}
				cl.Close()
				return
			}
			if err == nil {
				cl.Close()
				t.Fatal("Dial succeeded; want a refusal")
			}
			if !errors.Is(err, ErrNotAuthorised) || !strings.Contains(err.Error(), CredentialPath(c.home)) ||
				!strings.Contains(err.Error(), c.refused) {
				t.Fatalf("Dial = %v; want the refusal naming %s, saying %q", err, CredentialPath(c.home), c.refused)
			}
		})
	}
}
