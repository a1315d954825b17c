package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

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
func startGateway(ctx context.Context, cfg config.Config, rt *engine.Runtime, warn io.Writer) (*runningGateway, error) {
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
		fmt.Fprintf(warn, "talaria serve: %v; trying again every 30s\n", err)
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
				fmt.Fprintf(warn, "talaria serve: %v\n", err)
				return
			}
			fmt.Fprintf(warn, "talaria serve: telegram @%s answers\n", bot.BotName())
		}
		g, err := gateway.New(gateway.Options{
			Runtime: rt, Config: cfg, Platforms: []gateway.Platform{bot},
			Access: map[string]*gateway.Access{bot.Name(): {Users: tg.AllowedUsers, AllowAll: tg.AllowAll}},
			Groups: gateway.GroupSessions(cfg.Gateway.GroupSessions), Logger: newLogger(cfg.LogLevel),
		})
		if err != nil {
			fmt.Fprintf(warn, "talaria serve: %v\n", err)
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
