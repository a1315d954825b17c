package config

import (
	"fmt"
	"time"
)

// Gateway configures the messaging gateway (serve runs it when a platform
// is configured).
type Gateway struct {
	Telegram Telegram `yaml:"telegram"`
	Slack    Slack    `yaml:"slack"`
	// GroupSessions: per_user (each member of a group has a session of
	// their own, the default) or shared (one per group or thread).
	GroupSessions string `yaml:"group_sessions"`
	// ResetHour: a chat's first message after this hour of the day (local
	// time) starts a new session (default 4; -1: never).
	ResetHour int `yaml:"reset_hour"`
	// ResetIdle: a chat's message after this long without one starts a
	// new session (default 24h; 0: never).
	ResetIdle time.Duration `yaml:"reset_idle"`
}

// Defaults of the session reset (Hermes': 04:00, or 24 idle hours).
const (
	DefaultResetHour = 4
	DefaultResetIdle = 24 * time.Hour
)

// Telegram configures the Telegram bot.
type Telegram struct {
	// Token is the bot's token from @BotFather (TELEGRAM_BOT_TOKEN).
	Token string `yaml:"token"`
	// APIURL is the Bot API server (TELEGRAM_API_URL; empty: the public
	// one).
	APIURL string `yaml:"api_url"`
	// AllowedUsers are the Telegram user ids that may talk to the agent
	// (TELEGRAM_ALLOWED_USERS, comma-separated); empty: nobody, unless
	// AllowAll.
	AllowedUsers []string `yaml:"allowed_users"`
	AllowAll     bool     `yaml:"allow_all"`
}

// Slack configures the Slack app (Socket Mode).
type Slack struct {
	// BotToken is the bot user's OAuth token, xoxb-... (SLACK_BOT_TOKEN).
	BotToken string `yaml:"bot_token"`
	// AppToken is the app-level token with connections:write, xapp-...
	// (SLACK_APP_TOKEN): it opens the Socket Mode connection.
	AppToken string `yaml:"app_token"`
	// APIURL is the Web API (SLACK_API_URL; empty: https://slack.com/api/).
	APIURL string `yaml:"api_url"`
	// AllowedUsers are the Slack user ids (U0123...) that may talk to the
	// agent (SLACK_ALLOWED_USERS, comma-separated); empty: nobody, unless
	// AllowAll.
	AllowedUsers []string `yaml:"allowed_users"`
	AllowAll     bool     `yaml:"allow_all"`
}

// problems are what is wrong with g, for Validate. Pure.
func (g Gateway) problems() []string {
	var out []string
	if g.ResetHour < -1 || g.ResetHour > 23 {
		out = append(out, fmt.Sprintf("gateway.reset_hour %d is not an hour (0-23, or -1 for never)", g.ResetHour))
	}
	if g.ResetIdle < 0 {
		out = append(out, "gateway.reset_idle must not be negative (0: never)")
	}
	switch g.GroupSessions {
	case "", "per_user", "shared":
	default:
		out = append(out, fmt.Sprintf("gateway.group_sessions %q is not one of per_user, shared", g.GroupSessions))
	}
	if (g.Slack.BotToken == "") != (g.Slack.AppToken == "") {
		out = append(out, "gateway.slack needs both bot_token (SLACK_BOT_TOKEN, xoxb-) and app_token (SLACK_APP_TOKEN, xapp-)")
	}
	return out
}
