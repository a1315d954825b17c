package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// FileName is the configuration file inside $TALARIA_HOME.
const FileName = "config.yaml"

// envKeys are the environment variables Talaria reads. The same names are
// accepted as top-level keys in config.yaml.
var envKeys = []string{
	"OPENAI_API_KEY", "OPENAI_BASE_URL", "TALARIA_MODEL", "TALARIA_PROVIDER", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
	"TEMPORAL_ADDRESS",
	"TEMPORAL_NAMESPACE", "TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH", "TEMPORAL_TLS_SERVER_CA_CERT_PATH",
	"TEMPORAL_TLS_SERVER_NAME", "TEMPORAL_TLS", "TEMPORAL_TLS_CERT", "TEMPORAL_TLS_KEY", "TEMPORAL_TLS_CA",
	"TEMPORAL_API_KEY", "TALARIA_DB", "TALARIA_MAX_ITERATIONS", "TALARIA_LOG_LEVEL", "TALARIA_HEARTBEAT_TIMEOUT",
	"TALARIA_BUSY_INPUT_MODE", "TALARIA_API_LISTEN", "TALARIA_API_KEY",
	"TELEGRAM_BOT_TOKEN", "TELEGRAM_API_URL", "TELEGRAM_ALLOWED_USERS",
	"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_API_URL", "SLACK_ALLOWED_USERS",
	"DISCORD_BOT_TOKEN", "DISCORD_API_URL", "DISCORD_ALLOWED_USERS",
	"TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_FROM_NUMBER", "TWILIO_API_URL", "SMS_ALLOWED_USERS",
	"WHATSAPP_ACCESS_TOKEN", "WHATSAPP_APP_SECRET", "WHATSAPP_VERIFY_TOKEN", "WHATSAPP_PHONE_NUMBER_ID", "WHATSAPP_API_URL",
	"WHATSAPP_ALLOWED_USERS", "EMAIL_ALLOWED_USERS",
	"SEARXNG_URL", "BRAVE_API_KEY", "TAVILY_API_KEY", "EXA_API_KEY",
}

// EnvKeys lists the environment variables Talaria reads, for --help texts.
func EnvKeys() []string { return append([]string(nil), envKeys...) }

// Load builds the configuration for home from defaults, home/config.yaml (when
// present) and the environment read through getenv. It only reads: a
// missing home or file is not an error and nothing is created. A key the
// file should not hold, a value of the wrong type or a YAML syntax error is
// an error naming the file and the line.
func Load(home string, getenv func(string) string) (Config, error) {
	path := filepath.Join(home, FileName)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	case err != nil:
		return Default(home), fmt.Errorf("%w: read %s: %v", ErrInvalid, path, err)
	}
	return LoadBytes(home, data, getenv)
}

// LoadBytes is Load with data as the content of home/config.yaml (nil or
// empty: no file), read as strictly; errors name home/config.yaml and the
// line. It reads no file, so a document that is not written yet (say, with
// a key in it) can be checked in memory.
func LoadBytes(home string, data []byte, getenv func(string) string) (Config, error) {
	cfg := Default(home)
	if problems := applyYAML(&cfg, data); len(problems) > 0 {
		return cfg, fileError(filepath.Join(home, FileName), problems)
	}
	if err := applyTemporalProfile(&cfg.Temporal, getenv); err != nil {
		return cfg, err
	}
	if err := applyEnv(&cfg, getenv); err != nil {
		return cfg, err
	}
	cfg.Model.resolveKeyEnv(getenv)
	return cfg, nil
}

// applyYAML reads the structured form and the env-style top-level keys,
// strictly: every key must be one Talaria reads.
func applyYAML(cfg *Config, data []byte) []fileProblem {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return tabHint(yamlProblems(err, nil), data)
	}
	// A second document (after "---") would be read by nobody, and lost
	// by the next command that rewrites the file (model set).
	var more yaml.Node
	if err := dec.Decode(&more); err == nil {
		return []fileProblem{{more.Line, "a second YAML document (after ---): the file must hold one; join them"}}
	} else if !errors.Is(err, io.EOF) {
		return tabHint(yamlProblems(err, nil), data)
	}
	if len(doc.Content) == 0 {
		return nil // only comments
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return []fileProblem{{root.Line, "the file must hold keys and values (a YAML mapping)"}}
	}
	leaves := map[int]string{}
	if problems := knownKeys(root, reflect.TypeOf(*cfg), "", leaves); len(problems) > 0 {
		return problems
	}
	if err := root.Decode(cfg); err != nil {
		return yamlProblems(err, leaves)
	}
	var problems []fileProblem
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		if !isEnvKey(key.Value) || val.Tag == "!!null" {
			continue
		}
		if val.Kind != yaml.ScalarNode {
			problems = append(problems, fileProblem{key.Line, key.Value + " must be a single value"})
			continue
		}
		only := func(k string) string {
			if k == key.Value {
				return val.Value
			}
			return ""
		}
		if err := applyEnv(cfg, only); err != nil {
			problems = append(problems, fileProblem{key.Line, strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": ")})
		}
	}
	return problems
}

// tabHint says so when a syntax error's line is indented with a tab,
// which YAML does not allow. Pure.
func tabHint(problems []fileProblem, data []byte) []fileProblem {
	lines := strings.Split(string(data), "\n")
	for i, p := range problems {
		if p.line > 0 && p.line <= len(lines) && strings.HasPrefix(strings.TrimLeft(lines[p.line-1], " "), "\t") {
			problems[i].msg += " (a tab: YAML indents with spaces)"
		}
	}
	return problems
}

// applyEnv overrides cfg with every non-empty variable.
func applyEnv(cfg *Config, getenv func(string) string) error {
	set := func(key string, dst *string) {
		if v := getenv(key); v != "" {
			*dst = v
		}
	}
	set("TALARIA_PROVIDER", &cfg.Model.Provider)
	applyKeyEnv(cfg, getenv)
	set("TALARIA_MODEL", &cfg.Model.Name)
	// Temporal's standard variables, through the SDK's envconfig (see temporalenv.go).
	if err := applyTemporalEnv(&cfg.Temporal, getenv); err != nil {
		return err
	}
	set("TALARIA_DB", &cfg.DB)
	set("TALARIA_LOG_LEVEL", &cfg.LogLevel)
	set("TALARIA_BUSY_INPUT_MODE", &cfg.BusyInputMode)
	set("TALARIA_API_LISTEN", &cfg.API.Listen)
	set("TALARIA_API_KEY", &cfg.API.Key)
	set("TELEGRAM_BOT_TOKEN", &cfg.Gateway.Telegram.Token)
	set("TELEGRAM_API_URL", &cfg.Gateway.Telegram.APIURL)
	if v := getenv("TELEGRAM_ALLOWED_USERS"); v != "" {
		cfg.Gateway.Telegram.AllowedUsers = splitList(v)
	}
	set("SLACK_BOT_TOKEN", &cfg.Gateway.Slack.BotToken)
	set("SLACK_APP_TOKEN", &cfg.Gateway.Slack.AppToken)
	set("SLACK_API_URL", &cfg.Gateway.Slack.APIURL)
	set("SEARXNG_URL", &cfg.Web.Search.SearXNGURL)
	set("BRAVE_API_KEY", &cfg.Web.Search.BraveAPIKey)
	set("TAVILY_API_KEY", &cfg.Web.Search.TavilyAPIKey)
	set("EXA_API_KEY", &cfg.Web.Search.ExaAPIKey)
	if v := getenv("SLACK_ALLOWED_USERS"); v != "" {
		cfg.Gateway.Slack.AllowedUsers = splitList(v)
	}
	set("DISCORD_BOT_TOKEN", &cfg.Gateway.Discord.Token)
	set("TWILIO_ACCOUNT_SID", &cfg.Gateway.SMS.AccountSID)
	set("TWILIO_AUTH_TOKEN", &cfg.Gateway.SMS.AuthToken)
	set("TWILIO_FROM_NUMBER", &cfg.Gateway.SMS.From)
	set("TWILIO_API_URL", &cfg.Gateway.SMS.APIURL)
	if v := getenv("SMS_ALLOWED_USERS"); v != "" {
		cfg.Gateway.SMS.AllowedUsers = splitList(v)
	}
	set("WHATSAPP_ACCESS_TOKEN", &cfg.Gateway.WhatsApp.AccessToken)
	set("WHATSAPP_APP_SECRET", &cfg.Gateway.WhatsApp.AppSecret)
	set("WHATSAPP_VERIFY_TOKEN", &cfg.Gateway.WhatsApp.VerifyToken)
	set("WHATSAPP_PHONE_NUMBER_ID", &cfg.Gateway.WhatsApp.PhoneNumberID)
	set("WHATSAPP_API_URL", &cfg.Gateway.WhatsApp.APIURL)
	if v := getenv("EMAIL_ALLOWED_USERS"); v != "" {
		cfg.Gateway.Email.AllowedUsers = splitList(v)
	}
	if v := getenv("WHATSAPP_ALLOWED_USERS"); v != "" {
		cfg.Gateway.WhatsApp.AllowedUsers = splitList(v)
	}
	set("DISCORD_API_URL", &cfg.Gateway.Discord.APIURL)
	if v := getenv("DISCORD_ALLOWED_USERS"); v != "" {
		cfg.Gateway.Discord.AllowedUsers = splitList(v)
	}
	if v := getenv("TALARIA_HEARTBEAT_TIMEOUT"); v != "" {
		d, err := ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%w: TALARIA_HEARTBEAT_TIMEOUT=%q is not a duration", ErrInvalid, v)
		}
		cfg.HeartbeatTimeout = d
	}
	if v := getenv("TALARIA_MAX_ITERATIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%w: TALARIA_MAX_ITERATIONS=%q is not a number", ErrInvalid, v)
		}
		cfg.MaxIterations = n
	}
	return nil
}

// ParseDuration accepts Go durations ("90s") and plain seconds ("90").
func ParseDuration(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	return time.ParseDuration(s)
}

// splitList reads a comma- or space-separated list. Pure.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}
