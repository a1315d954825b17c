package main

import (
	"fmt"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// gatewayPlatforms are the platforms pairing knows.
var gatewayPlatforms = []string{"telegram", "slack", "discord", "sms", "whatsapp", "email"}

func newGatewayPairCommand() *cobra.Command {
	return controlCommandNoSession("pair PLATFORM", "Make a one-time code that lets a person talk to the agent on a platform",
		func(cmd *cobra.Command, _ config.Config, rt *talaria.Runtime, args []string) error {
			platform := args[0]
			known := false
			for _, p := range gatewayPlatforms {
				known = known || p == platform
			}
			if !known {
				return usagef("platform %q: use one of %v", platform, gatewayPlatforms)
			}
			code := talaria.NewPairingCode()
			expires := time.Now().Add(talaria.PairingTTL)
			if err := rt.Store.AddPairingCode(cmd.Context(), platform, code, expires); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n", code)
			fmt.Fprintf(cmd.ErrOrStderr(), "send the bot, in a direct message, within %s (until %s), once: /pair %s\n",
				talaria.PairingTTL, expires.Format("15:04"), code)
			return nil
		})
}
