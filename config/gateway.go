package config

import "fmt"

// Gateway configures the messaging gateway (serve runs it when a platform
// is configured).
type Gateway struct {
	Telegram Telegram `yaml:"telegram"`
	Slack    Slack    `yaml:"slack"`
	// GroupSessions: per_user (each member of a group has a session of
	// their own, the default) or shared (one per group or thread).
	GroupSessions string `yaml:"group_sessions"`
}

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
