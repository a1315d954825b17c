package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Terminal configures the terminal tool and every other subprocess a tool
// starts.
type Terminal struct {
	// EnvPassthrough names environment variables handed to tool
	// subprocesses on top of the built-in allowlist (PATH, HOME, LANG, ...).
	// A variable holding a configured secret is never passed, listed or not.
	EnvPassthrough []string `yaml:"env_passthrough"`
}

// Tools configures which tools turns may use and where the file tools may
// write and read.
type Tools struct {
	// Enabled, when set, are the only tools this worker offers and runs
	// (e.g. [read_file, todo] for a read-only agent); empty: all. A turn's
	// sender may narrow it, never widen it.
	Enabled []string `yaml:"enabled"`
	// Disabled are tools this worker never offers, whatever Enabled says.
	// Both take toolset names too (file, shell, web, recall, skills,
	// planning, messages): `talaria tools` lists them.
	Disabled []string `yaml:"disabled"`
	// WriteRoots are directories the file tools may write under, on top of
	// the session's working directory.
	WriteRoots []string `yaml:"write_roots"`
	// ReadRoots, when set, limit reads to these directories and the
	// working directory; empty allows reads anywhere. Credential files and
	// $TALARIA_HOME's secrets are never read either way.
	ReadRoots []string `yaml:"read_roots"`
	// OutputQuota bounds in bytes all tool outputs kept in full under
	// $TALARIA_HOME/outputs (one directory per session; the oldest files
	// are removed first to make room, and one output larger than the
	// quota is kept only up to it). 0: 1 GiB.
	OutputQuota ByteSize `yaml:"output_quota"`
}

// Web bounds the web tools (web_fetch, web_search).
type Web struct {
	// AllowPrivate lets web_fetch reach loopback, private, link-local and
	// other non-public addresses (a service on this machine or network);
	// by default they are refused, redirects included.
	AllowPrivate bool `yaml:"allow_private"`
	// Search configures web_search's backend.
	Search WebSearch `yaml:"search"`
}

// Search backends of web_search.
const (
	SearchSearXNG = "searxng"
	SearchBrave   = "brave"
	SearchTavily  = "tavily"
	SearchExa     = "exa"
)

// SearchBackends are web_search's backends, in the order one is picked
// when Backend is empty.
var SearchBackends = []string{SearchSearXNG, SearchBrave, SearchTavily, SearchExa}

// WebSearch chooses and reaches web_search's backend. Without any of the
// URL or keys, web_search is not offered.
type WebSearch struct {
	// Backend is searxng, brave, tavily or exa; empty: the first of them
	// configured.
	Backend string `yaml:"backend"`
	// SearXNGURL is a SearXNG instance with the JSON format enabled
	// (SEARXNG_URL), e.g. http://localhost:8888.
	SearXNGURL string `yaml:"searxng_url"`
	// BraveAPIKey is a Brave Search API key (BRAVE_API_KEY).
	BraveAPIKey string `yaml:"brave_api_key"`
	// TavilyAPIKey is a Tavily API key (TAVILY_API_KEY).
	TavilyAPIKey string `yaml:"tavily_api_key"`
	// ExaAPIKey is an Exa API key (EXA_API_KEY).
	ExaAPIKey string `yaml:"exa_api_key"`
	// BaseURL replaces the chosen API's address (a proxy, a compatible
	// service); empty: the provider's own.
	BaseURL string `yaml:"base_url"`
}

// Configured reports whether a backend is: what it names needs its key or
// URL, and an empty Backend needs any.
func (w WebSearch) Configured() bool { return w.Chosen() != "" }

// Chosen is the backend web_search uses ("" when none is configured).
func (w WebSearch) Chosen() string {
	has := map[string]bool{SearchSearXNG: w.SearXNGURL != "", SearchBrave: w.BraveAPIKey != "",
		SearchTavily: w.TavilyAPIKey != "", SearchExa: w.ExaAPIKey != ""}
	if w.Backend != "" {
		if has[w.Backend] {
			return w.Backend
		}
		return ""
	}
	for _, b := range SearchBackends {
		if has[b] {
			return b
		}
	}
	return ""
}

// Missing says what web_search needs to be configured, naming the keys.
func (w WebSearch) Missing() string {
	switch w.Backend {
	case SearchSearXNG:
		return "web.search.backend is searxng but no instance is set: set SEARXNG_URL (or web.search.searxng_url)"
	case SearchBrave:
		return "web.search.backend is brave but no key is set: set BRAVE_API_KEY (or web.search.brave_api_key)"
	case SearchTavily:
		return "web.search.backend is tavily but no key is set: set TAVILY_API_KEY (or web.search.tavily_api_key)"
	case SearchExa:
		return "web.search.backend is exa but no key is set: set EXA_API_KEY (or web.search.exa_api_key)"
	}
	return "no web search backend is configured: set SEARXNG_URL (a SearXNG instance), BRAVE_API_KEY, TAVILY_API_KEY or EXA_API_KEY (or web.search in config.yaml)"
}

// problems lists what is wrong with the web settings.
func (w Web) problems() []string {
	var out []string
	if b := w.Search.Backend; b != "" && !slices.Contains(SearchBackends, b) {
		out = append(out, fmt.Sprintf("web.search.backend %q is not one of %s", b, strings.Join(SearchBackends, ", ")))
	}
	for key, u := range map[string]string{"searxng_url": w.Search.SearXNGURL, "base_url": w.Search.BaseURL} {
		if u == "" {
			continue
		}
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			out = append(out, fmt.Sprintf("web.search.%s %q is not an http(s) URL", key, u))
		}
	}
	sort.Strings(out)
	return out
}

// envName is a portable environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// problems lists what is wrong with the terminal settings.
func (t Terminal) problems() []string {
	var out []string
	for _, n := range t.EnvPassthrough {
		if !envName.MatchString(n) {
			out = append(out, fmt.Sprintf("terminal.env_passthrough: %q is not an environment variable name", n))
		}
	}
	return out
}

// problems lists what is wrong with the root settings: every root must be
// absolute (or start with ~/).
func (t Tools) problems() []string {
	var out []string
	check := func(key string, roots []string) {
		for _, r := range roots {
			if !filepath.IsAbs(r) && r != "~" && !strings.HasPrefix(r, "~/") {
				out = append(out, fmt.Sprintf("tools.%s: %q must be an absolute path", key, r))
			}
		}
	}
	check("write_roots", t.WriteRoots)
	check("read_roots", t.ReadRoots)
	if t.OutputQuota < 0 {
		out = append(out, "tools.output_quota must not be negative")
	}
	return out
}

// PasswordEnvs are the variables the configuration names as holding
// passwords or keys (delivery.smtp.password_env,
// gateway.email.imap.password_env, transcription.api_key_env, the memory
// services' and the auxiliary model's api_key_env):
// never passed to a tool's subprocess, even when env_passthrough lists
// them. Pure.
func (c Config) PasswordEnvs() []string {
	var out []string
	for _, v := range []string{c.Delivery.SMTP.PasswordEnv, c.Gateway.Email.IMAP.PasswordEnv, c.Transcription.APIKeyEnv,
		c.Memory.Embeddings.APIKeyEnv, c.Memory.Honcho.APIKeyEnv, c.Memory.Mem0.APIKeyEnv, c.Memory.Supermemory.APIKeyEnv,
		c.Auxiliary.APIKeyEnv} {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Secrets are the configured secret values (model, fallback and auxiliary
// API keys, each key of a pool too,
// the database DSN, Temporal's API key and TLS files): none of them may
// reach a tool's subprocess, whatever variable would carry it.
func (c Config) Secrets() []string {
	var out []string
	add := func(v string) {
		if strings.TrimSpace(v) != "" {
			out = append(out, v)
		}
	}
	add(c.Model.APIKey)
	// Every piece of a comma-separated key and every key of a pool.
	pieces := func(key string, pool []string) {
		for _, k := range append(Keys(key, nil), pool...) {
			add(k)
		}
	}
	pieces(c.Model.APIKey, c.Model.APIKeys)
	for _, p := range c.FallbackProviders {
		add(p.APIKey)
		pieces(p.APIKey, p.APIKeys)
	}
	for _, k := range c.Auxiliary.APIKeys {
		add(k)
	}
	if IsPostgres(c.DB) || strings.Contains(c.DB, "://") {
		add(c.DB)
	}
	add(c.Temporal.APIKey)
	add(c.Temporal.TLSKey)
	add(c.Temporal.TLSCert)
	add(c.Temporal.TLSCA)
	add(c.API.Key)
	add(c.Gateway.Telegram.Token)
	add(c.Gateway.Slack.BotToken)
	add(c.Gateway.Slack.AppToken)
	add(c.Gateway.Discord.Token)
	add(c.Gateway.SMS.AuthToken)
	add(c.Gateway.WhatsApp.AccessToken)
	add(c.Gateway.WhatsApp.AppSecret)
	add(c.Gateway.WhatsApp.VerifyToken)
	add(c.Web.Search.BraveAPIKey)
	add(c.Web.Search.TavilyAPIKey)
	add(c.Web.Search.ExaAPIKey)
	for _, s := range c.MCPServers {
		for _, v := range s.Env {
			add(v)
		}
		for _, v := range s.Headers {
			add(v)
		}
	}
	return out
}

// SecretFiles are files the configuration names that hold secrets (the
// Temporal TLS key and certificates, a SQLite database): the file tools
// neither read nor write them.
func (c Config) SecretFiles() []string {
	var out []string
	for _, p := range []string{c.Temporal.TLSKey, c.Temporal.TLSCert, c.Temporal.TLSCA} {
		if p != "" {
			out = append(out, p)
		}
	}
	if c.DB != "" && !strings.Contains(c.DB, "://") && !strings.HasPrefix(c.DB, "file:") {
		out = append(out, c.DB, c.DB+"-wal", c.DB+"-shm", c.DB+"-journal")
	}
	return out
}

// Delegation bounds the sub-agents delegate_task starts. Zero values take
// the defaults (50 iterations, depth 2, 3 at once).
type Delegation struct {
	// MaxIterations is a task's budget when the call names none.
	MaxIterations int `yaml:"max_iterations"`
	// MaxDepth: how many levels of sub-agents a user's turn may start (a
	// sub-agent at this depth cannot delegate).
	MaxDepth int `yaml:"max_depth"`
	// MaxConcurrent sub-agents of one turn run at once; the rest wait.
	MaxConcurrent int `yaml:"max_concurrent"`
}

// problems lists what is wrong with the delegation settings.
func (d Delegation) problems() []string {
	var out []string
	for key, v := range map[string]int{"max_iterations": d.MaxIterations, "max_depth": d.MaxDepth, "max_concurrent": d.MaxConcurrent} {
		if v < 0 {
			out = append(out, fmt.Sprintf("delegation.%s must not be negative (0: the default)", key))
		}
	}
	sort.Strings(out)
	return out
}
