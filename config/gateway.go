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
	Discord  Discord  `yaml:"discord"`
	SMS      SMS      `yaml:"sms"`
	WhatsApp WhatsApp `yaml:"whatsapp"`
	Email    Email    `yaml:"email"`
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

// SessionReset is one platform's own session reset over the gateway's
// (gateway.reset_hour, gateway.reset_idle): a field left out keeps the
// gateway's.
type SessionReset struct {
	ResetHour *int           `yaml:"reset_hour,omitempty"`
	ResetIdle *time.Duration `yaml:"reset_idle,omitempty"`
}

// problems are what is wrong with r, the reset of section. Pure.
func (r SessionReset) problems(section string) []string {
	var out []string
	if r.ResetHour != nil {
		out = append(out, resetHourProblems(section, *r.ResetHour)...)
	}
	if r.ResetIdle != nil && *r.ResetIdle < 0 {
		out = append(out, section+".reset_idle must not be negative (0: never)")
	}
	return out
}

func resetHourProblems(section string, h int) []string {
	if h < -1 || h > 23 {
		return []string{fmt.Sprintf("%s.reset_hour %d is not an hour (0-23, or -1 for never)", section, h)}
	}
	return nil
}

// ResetFor is the session reset of a platform's chats: its own settings
// where it has them, else the gateway's. Pure.
func (g Gateway) ResetFor(platform string) (hour int, idle time.Duration) {
	hour, idle = g.ResetHour, g.ResetIdle
	var own SessionReset
	switch platform {
	case "telegram":
		own = g.Telegram.SessionReset
	case "slack":
		own = g.Slack.SessionReset
	case "discord":
		own = g.Discord.SessionReset
	case "sms":
		own = g.SMS.SessionReset
	case "whatsapp":
		own = g.WhatsApp.SessionReset
	case "email":
		own = g.Email.SessionReset
	}
	if own.ResetHour != nil {
		hour = *own.ResetHour
	}
	if own.ResetIdle != nil {
		idle = *own.ResetIdle
	}
	return hour, idle
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
	// SessionReset overrides the gateway's session reset for Telegram.
	SessionReset `yaml:",inline"`
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
	// SessionReset overrides the gateway's session reset for Slack.
	SessionReset `yaml:",inline"`
}

// Discord configures the Discord bot.
type Discord struct {
	// Token is the bot's token from the Developer Portal
	// (DISCORD_BOT_TOKEN).
	Token string `yaml:"token"`
	// APIURL is the REST API (DISCORD_API_URL; empty:
	// https://discord.com/api/v10).
	APIURL string `yaml:"api_url"`
	// AllowedUsers are the Discord user ids (snowflakes) that may talk to
	// the agent (DISCORD_ALLOWED_USERS, comma-separated); empty: nobody,
	// unless AllowAll.
	AllowedUsers []string `yaml:"allowed_users"`
	AllowAll     bool     `yaml:"allow_all"`
	// SessionReset overrides the gateway's session reset for Discord.
	SessionReset `yaml:",inline"`
}

// SMS configures the Twilio number the agent answers texts on.
type SMS struct {
	// AccountSID (AC..., TWILIO_ACCOUNT_SID) and AuthToken
	// (TWILIO_AUTH_TOKEN) are the Twilio account's.
	AccountSID string `yaml:"account_sid"`
	AuthToken  string `yaml:"auth_token"`
	// From is the Twilio phone number, E.164 (TWILIO_FROM_NUMBER).
	From string `yaml:"from"`
	// APIURL is the REST API (TWILIO_API_URL; empty:
	// https://api.twilio.com).
	APIURL string `yaml:"api_url"`
	// WebhookURL is the number's "A message comes in" URL as set in
	// Twilio's console (the signature covers it); empty: the URL as this
	// process sees the request, right when nothing rewrites it on the way.
	WebhookURL string `yaml:"webhook_url"`
	// AllowedUsers are the phone numbers (E.164) that may talk to the
	// agent (SMS_ALLOWED_USERS, comma-separated); empty: nobody, unless
	// AllowAll.
	AllowedUsers []string `yaml:"allowed_users"`
	AllowAll     bool     `yaml:"allow_all"`
	// SessionReset overrides the gateway's session reset for SMS.
	SessionReset `yaml:",inline"`
}

// Configured reports whether any of the number's settings is set.
func (s SMS) Configured() bool { return s.AccountSID != "" || s.AuthToken != "" || s.From != "" }

// WhatsApp configures the business number on the WhatsApp Cloud API.
type WhatsApp struct {
	// AccessToken calls the Graph API (WHATSAPP_ACCESS_TOKEN); AppSecret
	// checks the webhooks' signatures (WHATSAPP_APP_SECRET); VerifyToken
	// answers the webhook subscription's handshake (WHATSAPP_VERIFY_TOKEN).
	AccessToken string `yaml:"access_token"`
	AppSecret   string `yaml:"app_secret"`
	VerifyToken string `yaml:"verify_token"`
	// PhoneNumberID is the business number's id
	// (WHATSAPP_PHONE_NUMBER_ID).
	PhoneNumberID string `yaml:"phone_number_id"`
	// APIURL is the Graph API with its version (WHATSAPP_API_URL; empty:
	// https://graph.facebook.com/v21.0).
	APIURL string `yaml:"api_url"`
	// AllowedUsers are the WhatsApp ids (the phone number's digits, no
	// "+") that may talk to the agent (WHATSAPP_ALLOWED_USERS,
	// comma-separated); empty: nobody, unless AllowAll.
	AllowedUsers []string `yaml:"allowed_users"`
	AllowAll     bool     `yaml:"allow_all"`
	// SessionReset overrides the gateway's session reset for WhatsApp.
	SessionReset `yaml:",inline"`
}

// Configured reports whether any of the number's settings is set.
func (w WhatsApp) Configured() bool {
	return w.AccessToken != "" || w.AppSecret != "" || w.VerifyToken != "" || w.PhoneNumberID != ""
}

// Email configures the agent's mailbox: mail comes by IMAP, answers go
// through delivery.smtp.
type Email struct {
	IMAP EmailIMAP `yaml:"imap"`
	// Address is the agent's address, the one people write to (default:
	// delivery.smtp.from's address); mail from it is never answered.
	Address string `yaml:"address"`
	// AuthservID is the id the receiving mail server writes in its
	// Authentication-Results header (RFC 8601, e.g. mx.example.com): only
	// mail it says passed DMARC, or is DKIM-signed by the From domain, is
	// read (anyone can write a From line).
	AuthservID string `yaml:"authserv_id"`
	// AllowedUsers are the sender addresses that reach the agent
	// (EMAIL_ALLOWED_USERS, comma-separated); empty: nobody, unless
	// AllowAll.
	AllowedUsers []string `yaml:"allowed_users"`
	AllowAll     bool     `yaml:"allow_all"`
	// SessionReset overrides the gateway's session reset for email.
	SessionReset `yaml:",inline"`
}

// EmailIMAP is the mailbox's IMAP server.
type EmailIMAP struct {
	Host string `yaml:"host"`
	// Port defaults to 993 (143 with security starttls or none).
	Port     int    `yaml:"port"`
	Username string `yaml:"username"`
	// PasswordEnv names the environment variable holding the password.
	PasswordEnv string `yaml:"password_env"`
	// Mailbox is the folder read (default INBOX).
	Mailbox string `yaml:"mailbox"`
	// Security: tls (implicit TLS, the default), starttls, or none (a
	// server on this machine only).
	Security string `yaml:"security"`
}

// PortOrDefault is the port, or the security's default. Pure.
func (i EmailIMAP) PortOrDefault() int {
	switch {
	case i.Port != 0:
		return i.Port
	case i.Security == "starttls" || i.Security == "none":
		return 143
	}
	return 993
}

// problems are what is wrong with g, for Validate. Pure.
func (g Gateway) problems() []string {
	out := resetHourProblems("gateway", g.ResetHour)
	if g.ResetIdle < 0 {
		out = append(out, "gateway.reset_idle must not be negative (0: never)")
	}
	out = append(out, g.Telegram.SessionReset.problems("gateway.telegram")...)
	out = append(out, g.Slack.SessionReset.problems("gateway.slack")...)
	out = append(out, g.Discord.SessionReset.problems("gateway.discord")...)
	out = append(out, g.SMS.SessionReset.problems("gateway.sms")...)
	out = append(out, g.WhatsApp.SessionReset.problems("gateway.whatsapp")...)
	out = append(out, g.Email.SessionReset.problems("gateway.email")...)
	switch g.Email.IMAP.Security {
	case "", "tls", "starttls", "none":
	default:
		out = append(out, fmt.Sprintf("gateway.email.imap.security %q is not one of tls, starttls, none", g.Email.IMAP.Security))
	}
	if i := g.Email.IMAP; i.Host != "" && i.Username == "" {
		out = append(out, "gateway.email.imap needs a username (and password_env, the variable holding the password)")
	}
	if g.Email.IMAP.Host != "" && g.Email.AuthservID == "" {
		out = append(out, "gateway.email needs authserv_id: the id your mail server writes in Authentication-Results (only mail it authenticated is read)")
	}
	if w := g.WhatsApp; w.Configured() && (w.AccessToken == "" || w.AppSecret == "" || w.VerifyToken == "" || w.PhoneNumberID == "") {
		out = append(out, "gateway.whatsapp needs access_token, app_secret, verify_token and phone_number_id (WHATSAPP_ACCESS_TOKEN, WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN, WHATSAPP_PHONE_NUMBER_ID)")
	}
	if s := g.SMS; s.Configured() && (s.AccountSID == "" || s.AuthToken == "" || s.From == "") {
		out = append(out, "gateway.sms needs account_sid (TWILIO_ACCOUNT_SID), auth_token (TWILIO_AUTH_TOKEN) and from (TWILIO_FROM_NUMBER)")
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
