package talaria

import (
	"github.com/talaria-agent/talaria/internal/api"
	"github.com/talaria-agent/talaria/internal/embedded"
	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/internal/gateway/discord"
	"github.com/talaria-agent/talaria/internal/gateway/email"
	"github.com/talaria-agent/talaria/internal/gateway/slack"
	"github.com/talaria-agent/talaria/internal/gateway/sms"
	"github.com/talaria-agent/talaria/internal/gateway/telegram"
	"github.com/talaria-agent/talaria/internal/gateway/whatsapp"
	"github.com/talaria-agent/talaria/internal/logfile"
	"github.com/talaria-agent/talaria/internal/mailer"
	"github.com/talaria-agent/talaria/internal/telemetry"
)

// What serve runs beside the worker: the API, the embedded Temporal and its
// Web UI, the gateway and its platforms, telemetry and the log files.

// From package api.
type (
	APIOptions = api.Options
	APIServer  = api.Server
)

var (
	CheckListen  = api.CheckListen
	ErrAPIListen = api.ErrListen
	NewAPI       = api.New
)

// From package embedded.
type (
	EmbeddedOptions = embedded.Options
	EmbeddedServer  = embedded.Server
	UI              = embedded.UI
	UIOptions       = embedded.UIOptions
)

var (
	ErrUIPortUnavailable = embedded.ErrUIPortUnavailable
	StartEmbedded        = embedded.Start
)

// From package gateway.
type (
	Access         = gateway.Access
	Gateway        = gateway.Gateway
	GatewayOptions = gateway.Options
	GroupSessions  = gateway.GroupSessions
	Platform       = gateway.Platform
	ResetPolicy    = gateway.ResetPolicy
)

const (
	PairingTTL = gateway.PairingTTL
)

var (
	InFlight       = gateway.InFlight
	NewGateway     = gateway.New
	NewPairingCode = gateway.NewPairingCode
)

// From package discord.
type (
	DiscordOptions = discord.Options
)

var (
	ErrDiscordRefused = discord.ErrRefused
	NewDiscord        = discord.New
)

// From package sms.
type (
	SMSOptions = sms.Options
)

var (
	ErrSMSRefused = sms.ErrRefused
	NewSMS        = sms.New
)

// From package whatsapp.
type (
	WhatsAppOptions = whatsapp.Options
)

var (
	ErrWhatsAppRefused = whatsapp.ErrRefused
	NewWhatsApp        = whatsapp.New
)

// From package email.
type (
	EmailOptions = email.Options
)

var (
	ErrEmailRefused = email.ErrRefused
	NewEmail        = email.New
)

// From package mailer.
var AddressOf = mailer.AddressOf

// From package slack.
type (
	SlackOptions = slack.Options
)

var (
	ErrSlackRefused = slack.ErrRefused
	NewSlack        = slack.New
)

// From package telegram.
var (
	ErrTelegramRefused = telegram.ErrRefused
	NewTelegram        = telegram.New
)

// From package telemetry.
type (
	MetricsServer   = telemetry.Server
	Telemetry       = telemetry.Telemetry
	TelemetryOption = telemetry.Option
)

const (
	ScopeServer = telemetry.ScopeServer
)

var (
	ErrMetricsListen = telemetry.ErrListen
	// ServeProfiles serves Go's profiles on a loopback address.
	ServeProfiles     = telemetry.ServeProfiles
	NewTelemetry      = telemetry.New
	WithLogger        = telemetry.WithLogger
	WithMetrics       = telemetry.WithMetrics
	WithProcess       = telemetry.WithProcess
	WithTracesFromEnv = telemetry.WithTracesFromEnv
)

// From package logfile.
type (
	LogLine    = logfile.Line
	LogOptions = logfile.Options
	Logs       = logfile.Logs
)

var (
	FollowLogs    = logfile.Follow
	LogDir        = logfile.Dir
	LogFiles      = logfile.Files
	LogPath       = logfile.Path
	MergeLogs     = logfile.Merge
	OpenLogs      = logfile.Open
	ParseLogLevel = logfile.ParseLevel
	TailLog       = logfile.Tail
)
