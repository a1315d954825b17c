package config

import (
	"errors"

	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/modelinfo"
)

// ErrInvalid marks a configuration problem the user must fix.
var ErrInvalid = errors.New("invalid configuration")

// Defaults.
const (
	DefaultMaxIterations    = 90
	DefaultModel            = "gpt-4o-mini"
	DefaultNamespace        = "default"
	DefaultTemporalPort     = 7233
	DefaultUIPort           = 8233 // the embedded Web UI's, as `temporal server start-dev`'s
	DefaultModelTimeout     = 5 * time.Minute
	DefaultMaxRetryAfter    = 5 * time.Minute
	DefaultHeartbeatTimeout = 10 * time.Second
)

// Model is how the language model is reached.
type Model struct {
	ProviderOptions `yaml:",inline"`
	// BaseURL of the endpoint (OpenAI, OpenRouter, Ollama, vLLM, an
	// Anthropic proxy, ...); empty: the provider's own.
	BaseURL string `yaml:"base_url"`
	// APIKey is the key; several keys may be given separated by commas
	// (or as api_keys): a pool.
	APIKey string `yaml:"api_key"`
	// APIKeyEnv names the environment variable holding the key, read by
	// the process that calls the model, when api_key is not set.
	APIKeyEnv string `yaml:"api_key_env"`
	// Name is the model id sent with each request.
	Name string `yaml:"name"`
	// Stream selects SSE streaming for model calls (default true).
	Stream *bool `yaml:"stream,omitempty"`
	// MaxTokens caps each reply; 0 leaves it to the provider.
	MaxTokens int `yaml:"max_tokens"`
	// Timeout is how long a model call may go without progress: a plain
	// call without its answer, a stream without a chunk (default 5m). A
	// stream lives as long as chunks keep coming.
	Timeout time.Duration `yaml:"timeout"`
	// MaxRetryAfter caps the wait a provider asks for with Retry-After
	// before the next attempt (default 5m).
	MaxRetryAfter time.Duration `yaml:"max_retry_after"`
	// Attempts bounds the tries of one model call on retryable errors
	// (rate limits, overload, server errors, timeouts); default 6.
	Attempts int `yaml:"attempts"`
}

// Streaming reports whether model calls stream.
func (m Model) Streaming() bool { return m.Stream == nil || *m.Stream }

// Configured reports whether an endpoint is set: a base URL, a key, or a
// provider that needs none (a local Ollama).
func (m Model) Configured() bool {
	return m.BaseURL != "" || len(m.Keys()) > 0 || m.IsOllama()
}

// Endpoint is the effective base URL: the provider's own (the OpenAI API
// by default) when only a key is set.
func (m Model) Endpoint() string {
	if m.BaseURL != "" {
		return strings.TrimRight(m.BaseURL, "/")
	}
	return m.DefaultEndpoint()
}

// Keys is the model's key pool, in order.
func (m Model) Keys() []string { return Keys(m.APIKey, m.APIKeys) }

// Provider is a fallback model endpoint.
type Provider struct {
	ProviderOptions `yaml:",inline"`
	BaseURL         string `yaml:"base_url"`
	APIKey          string `yaml:"api_key"`
	// Model is the model id to use there; empty: the turn's model.
	Model string `yaml:"model"`
}

// Endpoint is the fallback's base URL: its provider's own when empty.
func (p Provider) Endpoint() string {
	if p.BaseURL != "" {
		return strings.TrimRight(p.BaseURL, "/")
	}
	return p.DefaultEndpoint()
}

// Keys is the fallback's key pool, in order.
func (p Provider) Keys() []string { return Keys(p.APIKey, p.APIKeys) }

// Approvals configure dangerous-command approval.
type Approvals struct {
	// Mode: ask (wait for a human, the default), off (run without asking;
	// blocked commands are still refused) or deny.
	Mode string `yaml:"mode"`
	// Timeout of one wait; the command is refused when it passes (default 5m).
	Timeout time.Duration `yaml:"timeout"`
	// NonInteractive says what a one-shot chat (chat -q) whose standard
	// input is not a terminal does when its turn waits on a person: deny
	// (the default: refuse the command, answer a question with "no one is
	// available") or wait (for talaria approve/deny/answer from elsewhere).
	NonInteractive string `yaml:"noninteractive"`
}

// Values of approvals.noninteractive.
const (
	NonInteractiveDeny = "deny"
	NonInteractiveWait = "wait"
)

// Temporal says which Temporal server to use.
type Temporal struct {
	// Address of an external Temporal frontend; empty embeds a server.
	Address   string `yaml:"address"`
	Namespace string `yaml:"namespace"`
	// Port of the embedded server's frontend (serve only; 0 picks a free port).
	Port int `yaml:"port"`
	// UIPort is the embedded server's Web UI port, on the frontend's IP
	// (serve and temporal; 0 turns the UI off).
	UIPort int `yaml:"ui_port"`
	// TLS to an external Temporal: client certificate and key (mTLS), the CA
	// that signed the server's certificate, and an override of the server
	// name to verify. Any of them enables TLS.
	TLSCert       string `yaml:"tls_cert"`
	TLSKey        string `yaml:"tls_key"`
	TLSCA         string `yaml:"tls_ca"`
	TLSServerName string `yaml:"tls_server_name"`
	// APIKey authenticates to Temporal Cloud or a server that expects one.
	APIKey string `yaml:"api_key"`
}

// TLS reports whether any TLS option is set.
func (t Temporal) TLS() bool {
	return t.TLSCert != "" || t.TLSKey != "" || t.TLSCA != "" || t.TLSServerName != ""
}

// Embedded reports whether Talaria runs its own Temporal server.
func (t Temporal) Embedded() bool { return t.Address == "" }

// Config is the effective configuration.
type Config struct {
	// Home is $TALARIA_HOME (default ~/.talaria).
	Home     string   `yaml:"-"`
	Model    Model    `yaml:"model"`
	Temporal Temporal `yaml:"temporal"`
	// DB is a postgres:// DSN or a SQLite file path (default $TALARIA_HOME/talaria.db).
	DB            string `yaml:"db"`
	MaxIterations int    `yaml:"max_iterations"`
	// FallbackProviders are tried in order when the primary endpoint is rate
	// limited, out of credit, refuses the key, stays overloaded or keeps
	// replying with nothing. Each new turn starts on the primary again.
	FallbackProviders []Provider `yaml:"fallback_providers"`
	// BusyInputMode says what a new message does while a turn of its session
	// runs: interrupt (stop the turn, then run the message), queue or steer.
	BusyInputMode string `yaml:"busy_input_mode"`
	// Approvals: how dangerous terminal commands are handled.
	Approvals Approvals `yaml:"approvals"`
	// Loop bounds the conversation loop's recovery steps and guardrails.
	Loop loop.Limits `yaml:"loop"`
	// Compression says when a long conversation is compacted.
	Compression Compression `yaml:"compression"`
	// Terminal: the environment tool subprocesses start from.
	Terminal Terminal `yaml:"terminal"`
	// Tools: where the file tools may write and read.
	Tools Tools `yaml:"tools"`
	// Web bounds the web tools.
	Web Web `yaml:"web"`
	// Delegation bounds delegate_task's sub-agents.
	Delegation Delegation `yaml:"delegation"`
	// Models are what is known of models, by name: context window,
	// output cap, prices (US dollars per million tokens) and whether they
	// take pictures (vision). They win
	// over what an endpoint tells and over the bundled table, part by
	// part (ModelOverrides).
	Models map[string]modelinfo.Info `yaml:"models"`
	// Prices are models' token prices (the older spelling of models:
	// NAME: {input, output}); a models: entry's prices win.
	Prices map[string]Price `yaml:"prices"`
	// MCPServers are the MCP servers whose tools the agent gets, by name.
	MCPServers map[string]MCPServer `yaml:"mcp_servers"`
	// HeartbeatTimeout is how long a model call or tool batch may go without
	// a heartbeat before Temporal retries it on another worker: the time a
	// crashed worker's turn waits before resuming.
	HeartbeatTimeout time.Duration `yaml:"heartbeat_timeout"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `yaml:"log_level"`
	// Events: how long a turn's live events are kept.
	Events Events `yaml:"events"`
	// Metrics: where the process serves its Prometheus metrics.
	Metrics Metrics `yaml:"metrics"`
	// API: the HTTP API and its web chat page.
	API API `yaml:"api"`
	// Gateway: the messaging platforms the agent answers on.
	Gateway Gateway `yaml:"gateway"`
	// Delivery: where cron results go besides files, webhooks and chats.
	Delivery Delivery `yaml:"delivery"`
	// Sandbox: the kernel sandbox the model's commands run in.
	Sandbox Sandbox `yaml:"sandbox"`
	// Transcription: where voice memos are transcribed.
	Transcription Transcription `yaml:"transcription"`
	// Memory: recall across sessions.
	Memory Memory `yaml:"memory"`
	// Auxiliary: a second, cheaper model for side jobs (query expansion
	// of recall); none by default.
	Auxiliary Auxiliary `yaml:"auxiliary"`
}

// Metrics configure the Prometheus metrics of serve, worker, scheduler
// and temporal.
type Metrics struct {
	// Listen is the host:port /metrics is served on (empty: no metrics).
	// The endpoint has no credential: bind it where only the monitoring
	// system reaches it.
	Listen string `yaml:"listen"`
}

// DefaultEventsRetention is how long a turn's live events are kept after
// the turn ended.
const DefaultEventsRetention = 24 * time.Hour

// Events configure the live events of turns (streamed text, tool starts
// and ends, notices), which clients follow and status reads.
type Events struct {
	// Retention is how long after its turn ended an event is kept (events
	// of no known turn: after they were written); 0 keeps them for ever.
	// The scheduler prunes them.
	Retention time.Duration `yaml:"retention"`
}

// Default returns the built-in defaults for home.
func Default(home string) Config {
	return Config{
		Home:             home,
		Model:            Model{Name: DefaultModel, Timeout: DefaultModelTimeout, MaxRetryAfter: DefaultMaxRetryAfter},
		Temporal:         Temporal{Namespace: DefaultNamespace, Port: DefaultTemporalPort, UIPort: DefaultUIPort},
		DB:               filepath.Join(home, "talaria.db"),
		MaxIterations:    DefaultMaxIterations,
		HeartbeatTimeout: DefaultHeartbeatTimeout,
		LogLevel:         "warn",
		Loop:             loop.DefaultLimits(),
		Compression:      DefaultCompression(),
		BusyInputMode:    "interrupt",
		Approvals:        Approvals{Mode: "ask", Timeout: 5 * time.Minute, NonInteractive: NonInteractiveDeny},
		Events:           Events{Retention: DefaultEventsRetention},
		Gateway:          Gateway{ResetHour: DefaultResetHour, ResetIdle: DefaultResetIdle},
	}
}

// HomeDir resolves $TALARIA_HOME, defaulting to ~/.talaria.
func HomeDir(getenv func(string) string) (string, error) {
	if h := getenv("TALARIA_HOME"); h != "" {
		return filepath.Abs(h)
	}
	userHome, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%w: cannot find the home directory (set TALARIA_HOME): %v", ErrInvalid, err)
	}
	return filepath.Join(userHome, ".talaria"), nil
}

// Validate checks the configuration as a whole.
func (c Config) Validate() error {
	var problems []string
	if c.MaxIterations < 1 {
		problems = append(problems, fmt.Sprintf("max_iterations must be at least 1 (got %d)", c.MaxIterations))
	}
	if c.Temporal.Port < 0 || c.Temporal.Port > 65535 {
		problems = append(problems, fmt.Sprintf("temporal port %d is out of range", c.Temporal.Port))
	}
	if c.Temporal.UIPort < 0 || c.Temporal.UIPort > 65535 {
		problems = append(problems, fmt.Sprintf("temporal ui_port %d is out of range (0 turns the Web UI off)", c.Temporal.UIPort))
	}
	if (c.Temporal.TLSCert == "") != (c.Temporal.TLSKey == "") {
		problems = append(problems, "temporal tls_cert and tls_key go together")
	}
	if c.Temporal.Namespace == "" {
		problems = append(problems, "temporal namespace must not be empty")
	}
	if c.Model.Name == "" {
		problems = append(problems, "model name must not be empty")
	}
	if c.Model.Attempts < 0 {
		problems = append(problems, "model attempts must not be negative")
	}
	if c.Model.Timeout <= 0 {
		problems = append(problems, "model timeout must be positive")
	}
	if c.Model.MaxRetryAfter <= 0 {
		problems = append(problems, "model max_retry_after must be positive")
	}
	if c.DB == "" {
		problems = append(problems, "db must not be empty")
	}
	problems = append(problems, c.Model.problems("model")...)
	for i, p := range c.FallbackProviders {
		where := fmt.Sprintf("fallback_providers[%d]", i)
		if p.BaseURL == "" && p.Provider == "" {
			problems = append(problems, where+" needs a base_url or a provider")
		}
		problems = append(problems, p.problems(where)...)
	}
	problems = append(problems, checkMCP(c.MCPServers)...)
	if c.HeartbeatTimeout < time.Second {
		problems = append(problems, "heartbeat_timeout must be at least 1s")
	}
	switch c.BusyInputMode {
	case "interrupt", "queue", "steer":
	default:
		problems = append(problems, fmt.Sprintf("busy_input_mode %q is not one of interrupt, queue, steer", c.BusyInputMode))
	}
	switch c.Approvals.Mode {
	case "ask", "off", "deny":
	default:
		problems = append(problems, fmt.Sprintf("approvals.mode %q is not one of ask, off, deny", c.Approvals.Mode))
	}
	if c.Approvals.Timeout <= 0 {
		problems = append(problems, "approvals.timeout must be positive")
	}
	switch c.Approvals.NonInteractive {
	case NonInteractiveDeny, NonInteractiveWait:
	default:
		problems = append(problems, fmt.Sprintf("approvals.noninteractive %q is not one of deny, wait", c.Approvals.NonInteractive))
	}
	if c.Events.Retention < 0 {
		problems = append(problems, "events.retention must not be negative (0 keeps events for ever)")
	}
	problems = append(problems, c.Metrics.problems()...)
	problems = append(problems, c.API.problems()...)
	problems = append(problems, c.Gateway.problems()...)
	problems = append(problems, c.Delivery.problems()...)
	problems = append(problems, c.Compression.problems()...)
	problems = append(problems, c.Terminal.problems()...)
	problems = append(problems, c.Tools.problems()...)
	problems = append(problems, c.Web.problems()...)
	problems = append(problems, c.Delegation.problems()...)
	problems = append(problems, c.Sandbox.problems(c.Home)...)
	problems = append(problems, modelProblems(c.Models, c.Prices)...)
	problems = append(problems, c.Transcription.problems()...)
	problems = append(problems, c.Memory.problems()...)
	problems = append(problems, c.Auxiliary.problems()...)
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		problems = append(problems, fmt.Sprintf("log_level %q is not one of debug, info, warn, error", c.LogLevel))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(problems, "; "))
	}
	return nil
}

// IsPostgres reports whether dsn names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Normalize makes a relative SQLite path absolute, so that every process
// (serve, and chat started elsewhere) means the same file.
func (c *Config) Normalize() error {
	if c.DB == "" || IsPostgres(c.DB) || strings.Contains(c.DB, "://") || strings.HasPrefix(c.DB, "file:") {
		return nil
	}
	abs, err := filepath.Abs(c.DB)
	if err != nil {
		return fmt.Errorf("%w: db path %q: %v", ErrInvalid, c.DB, err)
	}
	c.DB = abs
	return nil
}
