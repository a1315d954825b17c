// Package config resolves Talaria's effective configuration.
//
// Values come, lowest precedence first, from built-in defaults, the YAML file
// $TALARIA_HOME/config.yaml, environment variables and command-line flags
// (applied by the caller). Validate reports every problem as one clear error
// wrapping ErrInvalid, so the CLI can exit with status 2.
package config
