package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/tools"
)

// ToolPolicy is what the configuration lets tools touch: the environment
// passed to subprocesses, the secrets kept from them and the file roots.
// Pure.
func ToolPolicy(cfg config.Config) tools.Policy {
	return tools.Policy{
		EnvPassthrough: slices.DeleteFunc(slices.Clone(cfg.Terminal.EnvPassthrough), func(name string) bool {
			return slices.Contains(cfg.PasswordEnvs(), name)
		}),
		Secrets:     cfg.Secrets(),
		SecretFiles: cfg.SecretFiles(),
		WriteRoots:  cfg.Tools.WriteRoots,
		ReadRoots:   cfg.Tools.ReadRoots,
		Home:        cfg.Home,
		OutputQuota: int64(cfg.Tools.OutputQuota),
		Sandbox:     cfg.SandboxSettings(),

		AllowPrivateNetwork: cfg.Web.AllowPrivate,
	}
}

// enabledTools keeps the tools that tools.enabled names (all of them when
// it is empty) and tools.disabled does not, in their given order; both may
// name toolsets. A name that is neither a tool nor a toolset is a
// configuration error. Pure.
func enabledTools(enabled, disabled []string, all ...tools.Tool) ([]tools.Tool, error) {
	names := make([]string, len(all))
	for i, t := range all {
		names[i] = t.Name()
	}
	for _, list := range []struct {
		key   string
		names []string
	}{{"tools.enabled", enabled}, {"tools.disabled", disabled}} {
		for _, n := range list.names {
			if !slices.Contains(names, n) && !slices.Contains(tools.ToolsetNames(), n) {
				return nil, fmt.Errorf("%w: %s: %q is not a tool or toolset (tools: %s; toolsets: %s)", config.ErrInvalid, list.key, n,
					strings.Join(names, ", "), strings.Join(tools.ToolsetNames(), ", "))
			}
		}
	}
	on, off := tools.ExpandToolsets(enabled), tools.ExpandToolsets(disabled)
	var out []tools.Tool
	for _, t := range all {
		if (len(on) == 0 || slices.Contains(on, t.Name())) && !slices.Contains(off, t.Name()) {
			out = append(out, t)
		}
	}
	return out, nil
}
