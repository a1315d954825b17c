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
		EnvPassthrough: cfg.Terminal.EnvPassthrough,
		Secrets:        cfg.Secrets(),
		SecretFiles:    cfg.SecretFiles(),
		WriteRoots:     cfg.Tools.WriteRoots,
		ReadRoots:      cfg.Tools.ReadRoots,
		Home:           cfg.Home,
		OutputQuota:    int64(cfg.Tools.OutputQuota),

		AllowPrivateNetwork: cfg.Web.AllowPrivate,
	}
}

// enabledTools keeps the tools that tools.enabled names (all of them when
// it is empty), in their given order; a name that is no tool is a
// configuration error. Pure.
func enabledTools(enabled []string, all ...tools.Tool) ([]tools.Tool, error) {
	if len(enabled) == 0 {
		return all, nil
	}
	names := make([]string, len(all))
	for i, t := range all {
		names[i] = t.Name()
	}
	for _, n := range enabled {
		if !slices.Contains(names, n) {
			return nil, fmt.Errorf("%w: tools.enabled: %q is not a tool (tools: %s)", config.ErrInvalid, n, strings.Join(names, ", "))
		}
	}
	var out []tools.Tool
	for _, t := range all {
		if slices.Contains(enabled, t.Name()) {
			out = append(out, t)
		}
	}
	return out, nil
}
