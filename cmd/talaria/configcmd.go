package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

func newConfigCommand() *cobra.Command {
	var common commonFlags
	c := &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration",
		Long: `config prints the configuration talaria would use here, after defaults,
$TALARIA_HOME/config.yaml, the environment and the flags, as YAML. Secrets (API
keys, database passwords) are masked.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := common.loadConfig()
			if err != nil {
				return err
			}
			cfg.Model.APIKey = mask(cfg.Model.APIKey)
			cfg.Temporal.APIKey = mask(cfg.Temporal.APIKey)
			for i := range cfg.FallbackProviders {
				cfg.FallbackProviders[i].APIKey = mask(cfg.FallbackProviders[i].APIKey)
			}
			cfg.DB = redactDSN(cfg.DB)
			out, err := yaml.Marshal(cfg)
			if err != nil {
				return fmt.Errorf("encode configuration: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "# TALARIA_HOME=%s\n%s", cfg.Home, out)
			return nil
		},
	}
	common.register(c)
	return c
}

// mask hides a secret, keeping whether one is set.
func mask(secret string) string {
	if secret == "" {
		return ""
	}
	return "********"
}
