package config

import (
	"cmp"
	"fmt"

	"go.temporal.io/sdk/contrib/envconfig"
)

// The Temporal client settings load through the SDK's envconfig, so the
// variables and profiles of Temporal's own tools work here too:
// TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
// TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH,
// TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME, and a
// profile of a TOML file named by TEMPORAL_PROFILE and/or
// TEMPORAL_CONFIG_FILE.
//
// Precedence, lowest first: defaults, config.yaml, the profile, the
// environment, the flags. The profile file is read only when one of the two
// variables is set: the default file of Temporal's CLI
// (~/.config/temporalio/temporal.toml) may point at a cluster a user
// reaches for other work, and must not silently turn an embedded Talaria
// into a client of it.
//
// The names Talaria read before (TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY,
// TEMPORAL_TLS_CA) stay as aliases of the standard ones at the same level;
// both set to different values is an error naming both.

// temporalAlias is an old variable name and the standard one it stands for.
type temporalAlias struct{ old, standard string }

var temporalAliases = []temporalAlias{
	{"TEMPORAL_TLS_CERT", "TEMPORAL_TLS_CLIENT_CERT_PATH"},
	{"TEMPORAL_TLS_KEY", "TEMPORAL_TLS_CLIENT_KEY_PATH"},
	{"TEMPORAL_TLS_CA", "TEMPORAL_TLS_SERVER_CA_CERT_PATH"},
}

// temporalUnsupported are standard settings Talaria cannot honour; set, they
// are an error rather than silently ignored, since each weakens or changes
// what the connection trusts.
var temporalUnsupported = map[string]string{
	"TEMPORAL_TLS_CLIENT_CERT_DATA":          "use TEMPORAL_TLS_CLIENT_CERT_PATH",
	"TEMPORAL_TLS_CLIENT_KEY_DATA":           "use TEMPORAL_TLS_CLIENT_KEY_PATH",
	"TEMPORAL_TLS_SERVER_CA_CERT_DATA":       "use TEMPORAL_TLS_SERVER_CA_CERT_PATH",
	"TEMPORAL_TLS_DISABLE_HOST_VERIFICATION": "name the server with TEMPORAL_TLS_SERVER_NAME instead",
}

// envLookup adapts a getenv function for envconfig: an empty value counts
// as not set, as everywhere in Talaria's configuration.
type envLookup func(string) string

func (e envLookup) Environ() []string { return nil }

func (e envLookup) LookupEnv(k string) (string, bool) {
	v := e(k)
	return v, v != ""
}

// applyTemporalEnv applies the Temporal variables of getenv to t through
// envconfig, the old names as aliases.
func applyTemporalEnv(t *Temporal, getenv func(string) string) error {
	for name, instead := range temporalUnsupported {
		if getenv(name) != "" {
			return fmt.Errorf("%w: %s is not supported: %s", ErrInvalid, name, instead)
		}
	}
	aliased := func(k string) string {
		for _, a := range temporalAliases {
			if k == a.standard && getenv(k) == "" {
				return getenv(a.old)
			}
		}
		return getenv(k)
	}
	for _, a := range temporalAliases {
		o, s := getenv(a.old), getenv(a.standard)
		if o != "" && s != "" && o != s {
			return fmt.Errorf("%w: %s=%q and %s=%q differ: set only %s", ErrInvalid, a.old, o, a.standard, s, a.standard)
		}
	}
	var p envconfig.ClientConfigProfile
	if err := p.ApplyEnvVars(envLookup(aliased)); err != nil {
		return fmt.Errorf("%w: temporal environment: %v", ErrInvalid, err)
	}
	applyProfile(t, p)
	if v := getenv("TEMPORAL_TLS"); v != "" && p.TLS != nil {
		return checkTLSSwitch("TEMPORAL_TLS="+v, !p.TLS.Disabled, *t)
	}
	return nil
}

// applyTemporalProfile applies the profile of a Temporal client
// configuration file when TEMPORAL_PROFILE or TEMPORAL_CONFIG_FILE names
// one (see the package comment on why only then).
func applyTemporalProfile(t *Temporal, getenv func(string) string) error {
	file, name := getenv("TEMPORAL_CONFIG_FILE"), getenv("TEMPORAL_PROFILE")
	if file == "" && name == "" {
		return nil
	}
	p, err := envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{
		ConfigFilePath: file, ConfigFileProfile: name, ConfigFileStrict: true,
		DisableEnv: true, EnvLookup: envLookup(getenv),
	})
	if err != nil {
		return fmt.Errorf("%w: temporal profile %s: %v", ErrInvalid, profileLabel(file, name), err)
	}
	if p.TLS != nil {
		for what, set := range map[string]bool{
			"client_cert_data": len(p.TLS.ClientCertData) > 0, "client_key_data": len(p.TLS.ClientKeyData) > 0,
			"server_ca_cert_data": len(p.TLS.ServerCACertData) > 0, "disable_host_verification": p.TLS.DisableHostVerification,
		} {
			if set {
				return fmt.Errorf("%w: temporal profile %s: tls.%s is not supported (use the _path settings)", ErrInvalid, profileLabel(file, name), what)
			}
		}
	}
	applyProfile(t, p)
	if p.TLS != nil && p.TLS.Disabled {
		return checkTLSSwitch("temporal profile "+profileLabel(file, name)+" (tls disabled)", false, *t)
	}
	return nil
}

// checkTLSSwitch refuses an explicit TLS switch (TEMPORAL_TLS, a profile's
// tls.disabled) that the resolved settings t cannot follow: off while TLS
// settings or an API key are set, or on with nothing that makes a
// connection TLS (the server's name, a CA, a certificate or an API key).
func checkTLSSwitch(what string, on bool, t Temporal) error {
	if !on && (t.TLS() || t.APIKey != "") {
		return fmt.Errorf("%w: %s turns TLS off while TLS settings or an API key are set: remove one", ErrInvalid, what)
	}
	if on && !t.TLS() && t.APIKey == "" {
		return fmt.Errorf("%w: %s turns TLS on with nothing to verify the server by: set TEMPORAL_TLS_SERVER_NAME (or a CA, certificate or API key)", ErrInvalid, what)
	}
	return nil
}

func profileLabel(file, name string) string {
	name = cmp.Or(name, envconfig.DefaultConfigFileProfile)
	file = cmp.Or(file, envconfig.DefaultConfigFilePath())
	return fmt.Sprintf("%q in %s", name, file)
}

// applyProfile sets every value p holds on t. Pure.
func applyProfile(t *Temporal, p envconfig.ClientConfigProfile) {
	set := func(src string, dst *string) {
		if src != "" {
			*dst = src
		}
	}
	set(p.Address, &t.Address)
	set(p.Namespace, &t.Namespace)
	set(p.APIKey, &t.APIKey)
	if p.TLS != nil {
		set(p.TLS.ClientCertPath, &t.TLSCert)
		set(p.TLS.ClientKeyPath, &t.TLSKey)
		set(p.TLS.ServerCACertPath, &t.TLSCA)
		set(p.TLS.ServerName, &t.TLSServerName)
	}
}
