package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// gatewayHelp is what --help says about the gateway.
const gatewayHelp = `With a Telegram bot token (gateway.telegram.token or TELEGRAM_BOT_TOKEN), a
Slack app (gateway.slack.bot_token and app_token, or SLACK_BOT_TOKEN and
SLACK_APP_TOKEN) or a Discord bot token (gateway.discord.token or
DISCORD_BOT_TOKEN) it also answers there: only the users in allowed_users
(TELEGRAM_ALLOWED_USERS, SLACK_ALLOWED_USERS, DISCORD_ALLOWED_USERS:
comma-separated ids; empty: nobody) or paired with a code ('talaria gateway
pair PLATFORM') reach the agent; others get one polite refusal. Each DM is a session (a new one after
04:00 or 24 idle hours); /help lists the chat commands (/stop, /steer, /queue,
/status, /approve, /deny, /new, /undo, /retry...). See docs/gateway.md.`

// runningGateway is a started gateway and its ready-line part.
type runningGateway struct {
	mu     sync.Mutex
	g      *talaria.Gateway
	cancel context.CancelFunc
	done   chan struct{}
	ready  string
}

// platformConn is a configured platform: how to connect to it and who may
// use it.
type platformConn struct {
	name    string
	connect func(ctx context.Context) (talaria.Platform, error)
	refused error // the error that says retrying will not help
	access  *talaria.Access
	p       talaria.Platform
}

// configuredPlatforms are the platforms cfg has credentials for.
func configuredPlatforms(cfg config.Config) []*platformConn {
	var out []*platformConn
	if tg := cfg.Gateway.Telegram; tg.Token != "" {
		out = append(out, &platformConn{name: "telegram", refused: talaria.ErrTelegramRefused,
			access: &talaria.Access{Users: tg.AllowedUsers, AllowAll: tg.AllowAll},
			connect: func(ctx context.Context) (talaria.Platform, error) {
				bot, err := talaria.NewTelegram(ctx, tg.APIURL, tg.Token)
				if err != nil {
					return nil, err
				}
				return bot, nil
			}})
	}
	if sl := cfg.Gateway.Slack; sl.BotToken != "" || sl.AppToken != "" {
		logger := newLogger(cfg.LogLevel)
		out = append(out, &platformConn{name: "slack", refused: talaria.ErrSlackRefused,
			access: &talaria.Access{Users: sl.AllowedUsers, AllowAll: sl.AllowAll},
			connect: func(ctx context.Context) (talaria.Platform, error) {
				app, err := talaria.NewSlack(ctx, talaria.SlackOptions{APIURL: sl.APIURL, BotToken: sl.BotToken, AppToken: sl.AppToken, Logger: logger})
				if err != nil {
					return nil, err
				}
				return app, nil
			}})
	}
	if dc := cfg.Gateway.Discord; dc.Token != "" {
		logger := newLogger(cfg.LogLevel)
		out = append(out, &platformConn{name: "discord", refused: talaria.ErrDiscordRefused,
			access: &talaria.Access{Users: dc.AllowedUsers, AllowAll: dc.AllowAll},
			connect: func(ctx context.Context) (talaria.Platform, error) {
				bot, err := talaria.NewDiscord(ctx, talaria.DiscordOptions{APIURL: dc.APIURL, Token: dc.Token, Logger: logger})
				if err != nil {
					return nil, err
				}
				return bot, nil
			}})
	}
	if sm := cfg.Gateway.SMS; sm.Configured() {
		out = append(out, &platformConn{name: "sms", refused: talaria.ErrSMSRefused,
			access: &talaria.Access{Users: sm.AllowedUsers, AllowAll: sm.AllowAll},
			connect: func(ctx context.Context) (talaria.Platform, error) {
				n, err := talaria.NewSMS(ctx, talaria.SMSOptions{APIURL: sm.APIURL, AccountSID: sm.AccountSID, AuthToken: sm.AuthToken,
					From: sm.From, WebhookURL: sm.WebhookURL})
				if err != nil {
					return nil, err
				}
				return n, nil
			}})
	}
	if wa := cfg.Gateway.WhatsApp; wa.Configured() {
		out = append(out, &platformConn{name: "whatsapp", refused: talaria.ErrWhatsAppRefused,
			access: &talaria.Access{Users: wa.AllowedUsers, AllowAll: wa.AllowAll},
			connect: func(ctx context.Context) (talaria.Platform, error) {
				n, err := talaria.NewWhatsApp(ctx, talaria.WhatsAppOptions{APIURL: wa.APIURL, AccessToken: wa.AccessToken,
					AppSecret: wa.AppSecret, VerifyToken: wa.VerifyToken, PhoneNumberID: wa.PhoneNumberID})
				if err != nil {
					return nil, err
				}
				return n, nil
			}})
	}
	if em := cfg.Gateway.Email; em.IMAP.Host != "" {
		logger := newLogger(cfg.LogLevel)
		smtp := cfg.Delivery.SMTP
		out = append(out, &platformConn{name: "email", refused: talaria.ErrEmailRefused,
			access: &talaria.Access{Users: lowered(em.AllowedUsers), AllowAll: em.AllowAll},
			connect: func(ctx context.Context) (talaria.Platform, error) {
				box, err := talaria.NewEmail(ctx, talaria.EmailOptions{IMAP: em.IMAP, IMAPPassword: os.Getenv(em.IMAP.PasswordEnv),
					SMTP: smtp, SMTPPassword: os.Getenv(smtp.PasswordEnv), Address: cmp.Or(em.Address, talaria.AddressOf(smtp.From)),
					AuthservID: em.AuthservID, Logger: logger})
				if err != nil {
					return nil, err
				}
				return box, nil
			}})
	}
	return out
}

// startGateway starts the platforms cfg configures against rt; nil when it
// configures none. A token a platform refuses is an error in one line; a
// platform that does not answer is said in one line and tried again in
// the background until it answers (the gateway starts once every
// configured platform answered).
//
// With poll false the process takes no platform's updates by polling (it
// answers the webhook platforms' requests only), but its worker sends for
// every platform: any process on the gateway's task queue may be asked to.
func startGateway(ctx context.Context, name string, cfg config.Config, rt *talaria.Runtime, warn io.Writer, poll bool) (*runningGateway, error) {
	pcs := configuredPlatforms(cfg)
	if len(pcs) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &runningGateway{cancel: cancel, done: make(chan struct{})}
	for _, pc := range pcs {
		p, err := pc.connect(ctx)
		if errors.Is(err, pc.refused) {
			cancel()
			return nil, err
		}
		if err == nil {
			pc.p = p
			r.ready += fmt.Sprintf(", %s @%s", pc.name, p.BotName())
		} else {
			r.ready += ", " + pc.name
			fmt.Fprintf(warn, "talaria %s: %v; trying again every 30s\n", name, err)
		}
	}
	// The gateway runs with the platforms that answered; each other one
	// joins it when it answers (until then its tasks wait for a process
	// that has it, and its webhooks are answered 503).
	opts := talaria.GatewayOptions{Runtime: rt, Config: cfg, Access: map[string]*talaria.Access{},
		Groups:        talaria.GroupSessions(cfg.Gateway.GroupSessions),
		PlatformReset: map[string]talaria.ResetPolicy{}, Logger: newLogger(cfg.LogLevel)}
	for _, pc := range pcs {
		hour, idle := cfg.Gateway.ResetFor(pc.name)
		opts.PlatformReset[pc.name] = talaria.ResetPolicy{DailyHour: hour, Idle: idle}
		if pc.p != nil {
			opts.Platforms = append(opts.Platforms, pc.p)
			opts.Access[pc.name] = pc.access
		}
	}
	g, err := talaria.NewGateway(opts)
	if err != nil {
		cancel()
		return nil, err
	}
	r.g = g
	var wg sync.WaitGroup
	for _, pc := range pcs {
		if pc.p != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(30 * time.Second):
				}
				p, err := pc.connect(ctx)
				if err != nil && !errors.Is(err, pc.refused) {
					continue
				}
				if err == nil {
					err = g.Add(p, pc.access)
				}
				if err != nil {
					fmt.Fprintf(warn, "talaria %s: %v\n", name, err)
					return
				}
				fmt.Fprintf(warn, "talaria %s: %s @%s answers\n", name, pc.name, p.BotName())
				return
			}
		}()
	}
	go func() {
		defer close(r.done)
		if poll {
			g.Run(ctx)
		}
		<-ctx.Done()
		wg.Wait()
	}()
	return r, nil
}

// lowered is each address in lower case: mail addresses are compared so.
// Pure.
func lowered(addrs []string) []string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = strings.ToLower(strings.TrimSpace(a))
	}
	return out
}

// webhooks serves the running gateway's webhooks; nil when it has no
// platform (the API then has no /webhooks/ route). Until the gateway runs
// a request is answered 503, and the platform sends it again.
func (r *runningGateway) webhooks() http.Handler {
	if r == nil {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		g := r.g
		r.mu.Unlock()
		if g == nil {
			http.Error(w, "the gateway is starting", http.StatusServiceUnavailable)
			return
		}
		g.Webhooks().ServeHTTP(w, req)
	})
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
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if len(configuredPlatforms(cfg)) == 0 {
				return usagef("no messaging platform is configured: set TELEGRAM_BOT_TOKEN (or gateway.telegram.token), SLACK_BOT_TOKEN and SLACK_APP_TOKEN (gateway.slack.*), or DISCORD_BOT_TOKEN (gateway.discord.token), see docs/gateway.md")
			}
			rt, err := connectClient(cmd.Context(), cfg, newLogger(cfg.LogLevel))
			if err != nil {
				return err
			}
			defer rt.Close()
			gw, err := startGateway(cmd.Context(), "gateway", cfg, rt, cmd.ErrOrStderr(), true)
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
	return c
}
