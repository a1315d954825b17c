package tools

import (
	"os"

	"slices"
	"strings"

	"github.com/talaria-agent/talaria/internal/sandbox"
)

// Policy bounds what tools may touch. It comes from the worker's
// configuration; the zero value is the safe default: subprocesses get only
// the built-in environment allowlist, files are written only under the
// working directory and read anywhere but credential files and
// $TALARIA_HOME's secrets.
type Policy struct {
	// EnvPassthrough names variables passed to subprocesses on top of
	// BaseEnv (terminal.env_passthrough).
	EnvPassthrough []string
	// Secrets are configured secret values; a variable holding one is never
	// passed, whatever its name.
	Secrets []string
	// SecretFiles are files the configuration names that hold secrets
	// (TLS keys, the database); the file tools neither read nor write them.
	SecretFiles []string
	// WriteRoots are directories writable on top of the working directory
	// (tools.write_roots).
	WriteRoots []string
	// ReadRoots, when not empty, limit reads to them and the working
	// directory (tools.read_roots).
	ReadRoots []string
	// Home is $TALARIA_HOME; empty: $TALARIA_HOME or ~/.talaria.
	Home string
	// OutputQuota bounds in bytes all outputs kept in the output
	// directory (tools.output_quota); 0: DefaultOutputQuota.
	OutputQuota int64
	// AllowPrivateNetwork lets web_fetch reach non-public addresses
	// (web.allow_private).
	AllowPrivateNetwork bool
	// Sandbox is the kernel sandbox of every command a tool starts
	// (sandbox.*); the zero value is workspace-write without network.
	Sandbox sandbox.Settings
}

// BaseEnv are the variables every tool subprocess inherits from the worker.
var BaseEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ"}

// fixedEnv is set for every tool subprocess: nothing waits on a pager or a
// credential prompt.
var fixedEnv = []string{"PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0"}

// neverPassed are the variables through which Talaria itself reads secrets;
// they are not passed even when listed in terminal.env_passthrough.
var neverPassed = []string{"OPENAI_API_KEY", "TALARIA_DB", "TEMPORAL_API_KEY", "TALARIA_API_KEY", "TELEGRAM_BOT_TOKEN", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "DISCORD_BOT_TOKEN", "TWILIO_AUTH_TOKEN", "WHATSAPP_ACCESS_TOKEN", "WHATSAPP_APP_SECRET", "WHATSAPP_VERIFY_TOKEN",
	"BRAVE_API_KEY", "TAVILY_API_KEY", "EXA_API_KEY"}

// neverPassedPrefixes extend neverPassed to whole families.
var neverPassedPrefixes = []string{"TEMPORAL_TLS_"}

// minSecretLen is the length from which a secret found inside a longer
// value also keeps that value out; shorter ones must match whole.
const minSecretLen = 8

// NeverPassed reports whether a variable name is one Talaria reads secrets
// from, and so is never handed to a tool.
func NeverPassed(name string) bool {
	if slices.Contains(neverPassed, name) {
		return true
	}
	for _, p := range neverPassedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// PassedEnvNames splits the names a subprocess may inherit — BaseEnv and
// the configured passthrough — into those passed (when set and not holding
// a secret) and those refused by name.
func PassedEnvNames(passthrough []string) (passed, refused []string) {
	for _, n := range append(slices.Clone(BaseEnv), passthrough...) {
		switch {
		case NeverPassed(n):
			if !slices.Contains(refused, n) {
				refused = append(refused, n)
			}
		case !slices.Contains(passed, n):
			passed = append(passed, n)
		}
	}
	return passed, refused
}

// ToolEnviron builds a subprocess environment from environ ("NAME=value"
// entries, as os.Environ returns): only the allowed names, never a secret
// value, then the fixed settings. Pure.
func ToolEnviron(environ []string, p Policy) []string {
	allowed, _ := PassedEnvNames(p.EnvPassthrough)
	out := make([]string, 0, len(allowed)+len(fixedEnv)+1)
	seen := map[string]bool{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || seen[name] || !slices.Contains(allowed, name) || holdsSecret(value, p.Secrets) {
			continue
		}
		seen[name] = true
		out = append(out, kv)
	}
	return append(out, fixedEnv...)
}

// holdsSecret reports whether value is, or contains, a configured secret.
func holdsSecret(value string, secrets []string) bool {
	for _, s := range secrets {
		if s == "" {
			continue
		}
		if value == s || len(s) >= minSecretLen && strings.Contains(value, s) {
			return true
		}
	}
	return false
}

// processEnv is the environment of a subprocess started by a tool.
func (e Env) processEnv() []string {
	return ToolEnviron(os.Environ(), e.Policy)
}
