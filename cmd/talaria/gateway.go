package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/internal/gateway/telegram"
)

// gatewayHelp is what --help says about the gateway.
const gatewayHelp = `With a Telegram bot token (gateway.telegram.token or TELEGRAM_BOT_TOKEN) it
also answers on Telegram, by long polling: only the users in
gateway.telegram.allowed_users / TELEGRAM_ALLOWED_USERS (comma-separated ids;
empty: nobody) reach the agent, others get one polite refusal. Each DM is a
session; chat commands: /help, /stop, /steer TEXT, /queue TEXT, /status.`

// runningGateway is a started gateway and its ready-line part.
type runningGateway struct {
	mu     sync.Mutex
	g      *gateway.Gateway
	cancel context.CancelFunc
	done   chan struct{}
	ready  string
}

// startGateway starts the platforms cfg configures against rt; nil when it
// configures none. A token the platform refuses is an error in one line;
// a platform that does not answer is said in one line and tried again in
// the background until it answers.
func startGateway(ctx context.Context, name string, cfg config.Config, rt *engine.Runtime, warn io.Writer) (*runningGateway, error) {
	tg := cfg.Gateway.Telegram
	if tg.Token == "" {
		return nil, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &runningGateway{cancel: cancel, done: make(chan struct{}), ready: ", telegram"}
	bot, err := telegram.New(ctx, tg.APIURL, tg.Token)
	if errors.Is(err, telegram.ErrRefused) {
		cancel()
		return nil, err
	}
	if err == nil {
		r.ready = fmt.Sprintf(", telegram @%s", bot.BotName())
	} else {
		fmt.Fprintf(warn, "talaria %s: %v; trying again every 30s\n", name, err)
	}
	go func() {
		defer close(r.done)
		for bot == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(30 * time.Second):
			}
			if bot, err = telegram.New(ctx, tg.APIURL, tg.Token); err != nil && !errors.Is(err, telegram.ErrRefused) {
				continue
			}
			if err != nil {
				fmt.Fprintf(warn, "talaria %s: %v\n", name, err)
				return
			}
			fmt.Fprintf(warn, "talaria %s: telegram @%s answers\n", name, bot.BotName())
		}
		g, err := gateway.New(gateway.Options{
			Runtime: rt, Config: cfg, Platforms: []gateway.Platform{bot},
			Access: map[string]*gateway.Access{bot.Name(): {Users: tg.AllowedUsers, AllowAll: tg.AllowAll}},
			Groups: gateway.GroupSessions(cfg.Gateway.GroupSessions), Logger: newLogger(cfg.LogLevel),
		})
		if err != nil {
			fmt.Fprintf(warn, "talaria %s: %v\n", name, err)
			return
		}
		r.mu.Lock()
		r.g = g
		r.mu.Unlock()
		g.Run(ctx)
	}()
	return r, nil
}

func (r *runningGateway) readyLine() string {
	if r == nil {
		return ""
	}
	return r.ready
}

// Close stops taking updates and the gateway's worker.
func (r *runningGateway) Close() {
	if r == nil {
		return
	}
	r.cancel()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.g != nil {
		r.g.Close()
	}
}

func newGatewayCommand() *cobra.Command {
	var common commonFlags
	c := &cobra.Command{
		Use:   "gateway",
		Short: "Run only the messaging gateway, against a running serve or an external Temporal",
		Long: `gateway runs the messaging gateway alone, against the 'talaria serve' of the same
$TALARIA_HOME or against an external Temporal (--temporal-address or
TEMPORAL_ADDRESS) and database (--db or TALARIA_DB) shared with the workers.
Several may run: one process at a time takes a platform account's updates,
chosen by a lease in the store; when it dies another takes over within 30 s.
Every replica sends replies. SIGINT or SIGTERM stop it; turns go on.

` + gatewayHelp + `

See docs/gateway.md.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := common.loadConfig()
			if err != nil {
				return err
			}
			if cfg.Gateway.Telegram.Token == "" {
				return usagef("no messaging platform is configured: set TELEGRAM_BOT_TOKEN (or gateway.telegram.token), see docs/gateway.md")
			}
			rt, err := connectClient(cmd.Context(), cfg, newLogger(cfg.LogLevel))
			if err != nil {
				return err
			}
			defer rt.Close()
			gw, err := startGateway(cmd.Context(), "gateway", cfg, rt, cmd.ErrOrStderr())
			if err != nil {
				return usageErr(err)
			}
			defer gw.Close()
			fmt.Fprintf(cmd.ErrOrStderr(), "talaria gateway: ready (temporal %s, db %s%s)\n",
				rt.Config.Temporal.Address, redactDSN(cfg.DB), gw.readyLine())
			<-cmd.Context().Done()
			return nil
		},
	}
	common.register(c)
	return c
}
