// Package config resolves Talaria's effective configuration.
//
// Values come, lowest precedence first, from built-in defaults, the YAML file
// $TALARIA_HOME/config.yaml, a Temporal client profile (only when
// TEMPORAL_PROFILE or TEMPORAL_CONFIG_FILE names one), environment variables
// and command-line flags (Overrides: a flag given, even empty, wins). The
// Temporal client settings load through the SDK's envconfig, with
// Temporal's standard variable names; the older TLS names are aliases (see
// temporalenv.go). The file is read strictly: a
// key Talaria does not read, a value of the wrong type or a YAML syntax error
// is one error line naming the file, the line and the key. Loading only
// reads; it creates nothing. Validate reports every problem as one clear
// error wrapping ErrInvalid, so the CLI can exit with status 2.
package config
