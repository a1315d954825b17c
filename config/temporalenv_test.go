package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTemporalSettingsPrecedence: defaults < config.yaml < the profile
// named by TEMPORAL_PROFILE/TEMPORAL_CONFIG_FILE < the environment (old
// names and standard names alike) < flags.
func TestTemporalSettingsPrecedence(t *testing.T) {
	t.Parallel()

	str := func(s string) *string { return &s }
	const profile = `
[profile.default]
address = "default-profile:7233"

[profile.cloud]
address = "cloud:7233"
namespace = "cloudns"
api_key = "cloud-key"
[profile.cloud.tls]
server_name = "cloud.example"
client_cert_path = "/p/cert.pem"
client_key_path = "/p/key.pem"
`
	tests := []struct {
		name    string
		yaml    string
		env     map[string]string
		flags   Overrides
		want    Temporal
		wantErr string
	}{
		{name: "defaults", want: Temporal{Namespace: DefaultNamespace}},
		{name: "standard TLS variables", env: map[string]string{
			"TEMPORAL_TLS_CLIENT_CERT_PATH": "/c.pem", "TEMPORAL_TLS_CLIENT_KEY_PATH": "/k.pem",
			"TEMPORAL_TLS_SERVER_CA_CERT_PATH": "/ca.pem", "TEMPORAL_TLS_SERVER_NAME": "t.example",
			"TEMPORAL_ADDRESS": "t:7233", "TEMPORAL_API_KEY": "k"},
			want: Temporal{Address: "t:7233", Namespace: DefaultNamespace, TLSCert: "/c.pem", TLSKey: "/k.pem", TLSCA: "/ca.pem", TLSServerName: "t.example", APIKey: "k"}},
		{name: "old names are aliases", env: map[string]string{
			"TEMPORAL_TLS_CERT": "/c.pem", "TEMPORAL_TLS_KEY": "/k.pem", "TEMPORAL_TLS_CA": "/ca.pem"},
			want: Temporal{Namespace: DefaultNamespace, TLSCert: "/c.pem", TLSKey: "/k.pem", TLSCA: "/ca.pem"}},
		{name: "old and standard name agreeing", env: map[string]string{
			"TEMPORAL_TLS_CERT": "/c.pem", "TEMPORAL_TLS_CLIENT_CERT_PATH": "/c.pem", "TEMPORAL_TLS_KEY": "/k.pem"},
			want: Temporal{Namespace: DefaultNamespace, TLSCert: "/c.pem", TLSKey: "/k.pem"}},
		{name: "old and standard name differing", env: map[string]string{
			"TEMPORAL_TLS_CA": "/a.pem", "TEMPORAL_TLS_SERVER_CA_CERT_PATH": "/b.pem"},
			wantErr: `TEMPORAL_TLS_CA="/a.pem" and TEMPORAL_TLS_SERVER_CA_CERT_PATH="/b.pem" differ`},
		{name: "environment beats the file", yaml: "temporal:\n  address: file:7233\n  tls_ca: /file-ca.pem\n",
			env:  map[string]string{"TEMPORAL_TLS_SERVER_CA_CERT_PATH": "/env-ca.pem"},
			want: Temporal{Address: "file:7233", Namespace: DefaultNamespace, TLSCA: "/env-ca.pem"}},
		{name: "standard name as a file key", yaml: "TEMPORAL_TLS_CLIENT_CERT_PATH: /y.pem\nTEMPORAL_TLS_CLIENT_KEY_PATH: /yk.pem\n",
			want: Temporal{Namespace: DefaultNamespace, TLSCert: "/y.pem", TLSKey: "/yk.pem"}},
		{name: "profile beats the file", yaml: "temporal:\n  address: file:7233\n  namespace: filens\n",
			env: map[string]string{"TEMPORAL_PROFILE": "cloud", "TEMPORAL_CONFIG_FILE": "PROFILE"},
			want: Temporal{Address: "cloud:7233", Namespace: "cloudns", APIKey: "cloud-key", TLSServerName: "cloud.example",
				TLSCert: "/p/cert.pem", TLSKey: "/p/key.pem"}},
		{name: "environment beats the profile", env: map[string]string{"TEMPORAL_PROFILE": "cloud", "TEMPORAL_CONFIG_FILE": "PROFILE",
			"TEMPORAL_NAMESPACE": "envns"},
			want: Temporal{Address: "cloud:7233", Namespace: "envns", APIKey: "cloud-key", TLSServerName: "cloud.example",
				TLSCert: "/p/cert.pem", TLSKey: "/p/key.pem"}},
		{name: "flags beat the profile and environment", env: map[string]string{"TEMPORAL_PROFILE": "cloud", "TEMPORAL_CONFIG_FILE": "PROFILE",
			"TEMPORAL_ADDRESS": "env:7233"}, flags: Overrides{TemporalAddress: str("flag:7233"), Namespace: str("flagns")},
			want: Temporal{Address: "flag:7233", Namespace: "flagns", APIKey: "cloud-key", TLSServerName: "cloud.example",
				TLSCert: "/p/cert.pem", TLSKey: "/p/key.pem"}},
		{name: "the file's default profile", env: map[string]string{"TEMPORAL_CONFIG_FILE": "PROFILE"},
			want: Temporal{Address: "default-profile:7233", Namespace: DefaultNamespace}},
		{name: "a missing profile", env: map[string]string{"TEMPORAL_PROFILE": "nope", "TEMPORAL_CONFIG_FILE": "PROFILE"},
			wantErr: `temporal profile "nope"`},
		{name: "certificate data unsupported", env: map[string]string{"TEMPORAL_TLS_CLIENT_CERT_DATA": "-----BEGIN"},
			wantErr: "TEMPORAL_TLS_CLIENT_CERT_DATA is not supported: use TEMPORAL_TLS_CLIENT_CERT_PATH"},
		{name: "TLS on with nothing to verify", env: map[string]string{"TEMPORAL_TLS": "true", "TEMPORAL_ADDRESS": "t:7233"},
			wantErr: "TEMPORAL_TLS=true turns TLS on"},
		{name: "TLS on with a server name", env: map[string]string{"TEMPORAL_TLS": "true", "TEMPORAL_TLS_SERVER_NAME": "t"},
			want: Temporal{Namespace: DefaultNamespace, TLSServerName: "t"}},
		{name: "TLS off with an API key", env: map[string]string{"TEMPORAL_TLS": "false", "TEMPORAL_API_KEY": "k"},
			wantErr: "turns TLS off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			home := t.TempDir()
			if tt.yaml != "" {
				if err := os.WriteFile(filepath.Join(home, FileName), []byte(tt.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			profilePath := filepath.Join(t.TempDir(), "temporal.toml")
			if err := os.WriteFile(profilePath, []byte(profile), 0o600); err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{}
			for k, v := range tt.env {
				if v == "PROFILE" {
					v = profilePath
				}
				vars[k] = v
			}
			c, err := Resolve(home, env(vars), tt.flags)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := c.Temporal
			got.Port, got.UIPort = 0, 0
			if got != tt.want {
				t.Fatalf("temporal settings\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestNoProfileFileWithoutTheVariables: Temporal's default client file is
// not read unless TEMPORAL_PROFILE or TEMPORAL_CONFIG_FILE asks for it.
func TestNoProfileFileWithoutTheVariables(t *testing.T) {
	cfgDir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgDir)
	if err := os.MkdirAll(filepath.Join(cfgDir, "temporalio"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "temporalio", "temporal.toml"), []byte("[profile.default]\naddress = \"elsewhere:7233\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Resolve(t.TempDir(), env(nil), Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Temporal.Embedded() {
		t.Fatalf("the default Temporal profile was read: address %q", c.Temporal.Address)
	}
}
