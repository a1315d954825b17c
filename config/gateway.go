package config

import "fmt"

// Gateway configures the messaging gateway (serve runs it when a platform
// is configured).
type Gateway struct {
	Telegram Telegram `yaml:"telegram"`
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

// problems are what is wrong with g, for Validate. Pure.
func (g Gateway) problems() []string {
	var out []string
	switch g.GroupSessions {
	case "", "per_user", "shared":
	default:
		out = append(out, fmt.Sprintf("gateway.group_sessions %q is not one of per_user, shared", g.GroupSessions))
	}
	return out
}
