package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/talaria-agent/talaria/config"
)

func newConfigCommand() *cobra.Command {
	var out outputFormat
	c := &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration",
		Long: `config prints the configuration talaria would use here, after defaults,
$TALARIA_HOME/config.yaml, the environment and the flags, as YAML. Secrets (API
keys, database passwords) are masked. It ends with the environment variables
tool subprocesses inherit (the built-in allowlist and terminal.env_passthrough).
When a 'talaria serve' runs for this TALARIA_HOME, it also shows the model
settings turns use (serve's: see 'talaria model show'). -o json prints one object
with snake_case keys. It only reads: a missing $TALARIA_HOME is not created.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON := out.json()
			cfg, err := readOnlyConfig(cmd)
			if err != nil {
				return err
			}
			cfg.Model.APIKey = mask(cfg.Model.APIKey)
			cfg.Model.APIKeys = maskAll(cfg.Model.APIKeys)
			cfg.Model.BaseURL = talaria.RedactURL(cfg.Model.BaseURL) // a URL may hold a key
			cfg.Temporal.APIKey = mask(cfg.Temporal.APIKey)
			cfg.API.Key = mask(cfg.API.Key)
			cfg.Gateway.Telegram.Token = mask(cfg.Gateway.Telegram.Token)
			cfg.Gateway.Slack.BotToken = mask(cfg.Gateway.Slack.BotToken)
			cfg.Gateway.Slack.AppToken = mask(cfg.Gateway.Slack.AppToken)
			cfg.Gateway.Discord.Token = mask(cfg.Gateway.Discord.Token)
			cfg.Gateway.SMS.AuthToken = mask(cfg.Gateway.SMS.AuthToken)
			wa := &cfg.Gateway.WhatsApp
			wa.AccessToken, wa.AppSecret, wa.VerifyToken = mask(wa.AccessToken), mask(wa.AppSecret), mask(wa.VerifyToken)
			cfg.MCPServers = maskedMCP(cfg.MCPServers)
			s := &cfg.Web.Search
			s.BraveAPIKey, s.TavilyAPIKey, s.ExaAPIKey = mask(s.BraveAPIKey), mask(s.TavilyAPIKey), mask(s.ExaAPIKey)
			for i := range cfg.FallbackProviders {
				cfg.FallbackProviders[i].APIKey = mask(cfg.FallbackProviders[i].APIKey)
				cfg.FallbackProviders[i].APIKeys = maskAll(cfg.FallbackProviders[i].APIKeys)
				cfg.FallbackProviders[i].BaseURL = talaria.RedactURL(cfg.FallbackProviders[i].BaseURL)
			}
			cfg.DB = redactDSN(cfg.DB)
			serve, serving := serveModel(cfg.Home)
			if asJSON {
				return writeConfigJSON(cmd.OutOrStdout(), cfg, serve, serving)
			}
			text, err := yaml.Marshal(cfg)
			if err != nil {
				return fmt.Errorf("encode configuration: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "# TALARIA_HOME=%s\n%s%s", cfg.Home, text, toolEnvSummary(cfg.Terminal.EnvPassthrough))
			if serving {
				fmt.Fprint(cmd.OutOrStdout(), commented(serve))
			}
			return nil
		},
	}
	out.register(c)
	return c
}

// readOnlyConfig resolves the configuration like loadConfig, without
// creating $TALARIA_HOME; a flag given (even empty) overrides.
func readOnlyConfig(cmd *cobra.Command) (config.Config, error) {
	home, err := config.HomeDir(os.Getenv)
	if err != nil {
		return config.Config{}, usageErr(err)
	}
	cfg, err := config.Resolve(home, os.Getenv, overrides(cmd))
	if err != nil {
		return cfg, usageErr(err)
	}
	return cfg, nil
}

// toolEnvSummary says which environment variables tool subprocesses
// inherit, and which listed ones are never passed.
func toolEnvSummary(passthrough []string) string {
	passed, refused := talaria.PassedEnvNames(passthrough)
	var b strings.Builder
	fmt.Fprintf(&b, "# environment passed to tools: %s\n", strings.Join(passed, " "))
	if len(refused) > 0 {
		fmt.Fprintf(&b, "# never passed (they hold Talaria's secrets): %s\n", strings.Join(refused, " "))
	}
	b.WriteString("# variables holding a configured secret are dropped whatever their name\n")
	return b.String()
}

// mask hides a secret, keeping whether one is set.
func mask(secret string) string {
	if secret == "" {
		return ""
	}
	return "********"
}

// maskAll masks each key of a pool.
func maskAll(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = mask(k)
	}
	return out
}

// maskedMCP is servers with their env values and headers masked: they
// carry tokens.
func maskedMCP(servers map[string]config.MCPServer) map[string]config.MCPServer {
	out := make(map[string]config.MCPServer, len(servers))
	for name, s := range servers {
		env, headers := map[string]string{}, map[string]string{}
		for k, v := range s.Env {
			env[k] = mask(v)
		}
		for k, v := range s.Headers {
			headers[k] = mask(v)
		}
		s.Env, s.Headers = env, headers
		out[name] = s
	}
	return out
}
