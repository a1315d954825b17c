package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/talaria-agent/talaria/config"
)

// modelSetFlags are the flags of 'model set' and 'setup'.
type modelSetFlags struct {
	provider, baseURL, model, apiKeyEnv string
	apiKeyStdin                         bool
}

// change is the change the flags ask for; the key is read from in with
// --api-key-stdin (asked on prompt when in is a terminal).
func (f *modelSetFlags) change(in io.Reader, prompt io.Writer) (modelChange, error) {
	change := modelChange{Provider: strings.ToLower(strings.TrimSpace(f.provider)), BaseURL: strings.TrimRight(f.baseURL, "/"),
		Name: f.model, APIKeyEnv: f.apiKeyEnv}
	if f.apiKeyStdin {
		key, err := readKey(in, prompt)
		if err != nil {
			return change, usageErr(err)
		}
		change.APIKey = key
	}
	return change, nil
}

func (f *modelSetFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&f.provider, "provider", "", "wire format: openai (chat completions, the default), anthropic, responses or ollama (docs/providers.md)")
	c.Flags().StringVar(&f.baseURL, "base-url", "", "endpoint, e.g. http://localhost:11434/v1 (Ollama), https://api.openai.com/v1; empty: the provider's own")
	c.Flags().StringVar(&f.model, "model", "", "model name sent with each request, e.g. llama3.1")
	c.Flags().StringVar(&f.apiKeyEnv, "api-key-env", "", "name of the environment variable holding the API key (the process running turns reads it)")
	c.Flags().BoolVar(&f.apiKeyStdin, "api-key-stdin", false, "read the API key from standard input and store it in config.yaml (mode 0600)")
}

func newModelCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "model",
		Short: "Show or set the model endpoint turns use",
		Long: `The model settings (endpoint, model name, key) belong to the process that runs
turns: 'talaria serve' when one runs for this TALARIA_HOME, else the 'chat' that
embeds its own worker. Both read $TALARIA_HOME/config.yaml (then OPENAI_BASE_URL,
OPENAI_API_KEY and TALARIA_MODEL in their own environment); a running serve
applies changes of config.yaml's model settings to new model calls without a
restart. 'chat -m', 'send -m' and 'cron add --model' choose another model for
their turns only.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newModelSetCommand(), newModelShowCommand())
	return c
}

func newModelSetCommand() *cobra.Command {
	var f modelSetFlags
	c := &cobra.Command{
		Use:   "set",
		Short: "Write the model endpoint and name into $TALARIA_HOME/config.yaml",
		Long: `set writes the model settings into $TALARIA_HOME/config.yaml (created, mode 0600,
when missing; its other keys and comments are kept), after checking the URL. It
asks the endpoint for its models (GET /models) and warns when nothing answers,
but saves anyway. A running serve picks the change up for new model calls; set
waits a few seconds to say so.

Keys: prefer --api-key-env VAR (the file keeps only the variable's name; the
process running turns reads it from its environment), or --api-key-stdin (the
key is stored in the file). A key is never taken as a flag value, which would
stay in the shell's history.`,
		Example: `  talaria model set --base-url http://localhost:11434/v1 --model llama3.1
  talaria model set --base-url https://api.openai.com/v1 --model gpt-4o-mini --api-key-env OPENAI_API_KEY
  talaria model set --model qwen2.5-coder     # keep the endpoint, change the model`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			change, err := f.change(cmd.InOrStdin(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return setModel(cmd, change)
		},
	}
	f.register(c)
	return c
}

// readKey reads one line, the key, from r; on a terminal it asks on
// prompt and the key is not echoed.
func readKey(r io.Reader, prompt io.Writer) (string, error) {
	var line string
	if f, ok := r.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(prompt, "API key (not shown): ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return "", fmt.Errorf("--api-key-stdin: read the key: %w", err)
		}
		line = string(b)
	} else {
		var err error
		line, err = bufio.NewReader(r).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("--api-key-stdin: read the key: %w", err)
		}
	}
	key := strings.TrimSpace(line)
	if key == "" {
		return "", errors.New("--api-key-stdin: no key on standard input")
	}
	return key, nil
}

// setModel writes change into config.yaml and reports what uses it.
func setModel(cmd *cobra.Command, change modelChange) error {
	if err := checkChange(change); err != nil {
		return usageErr(err)
	}
	home, err := config.HomeDir(os.Getenv)
	if err != nil {
		return usageErr(err)
	}
	if err := talaria.EnsureHome(home); err != nil {
		return usageErr(err)
	}
	path := filepath.Join(home, config.FileName)
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return usagef("read %s: %v", path, err)
	}
	data, notes, err := applyModelChange(old, change)
	if err != nil {
		return usagef("%s: %v", path, err)
	}
	cfg, err := checkedConfig(home, data)
	if err != nil {
		return usagef("%s would not load: %v", path, oneLine(err))
	}
	errOut := cmd.ErrOrStderr()
	ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Second)
	defer cancel()
	if err := talaria.Ping(ctx, talaria.Endpoint{BaseURL: cfg.Model.Endpoint(), APIKey: cfg.Model.APIKey}); err != nil {
		fmt.Fprintf(errOut, "talaria: warning: %s; saved anyway\n", oneLine(err)) // talaria.Ping redacts the URL
	}
	written := time.Now() // serve's next read of the file is later
	if err := writeConfigFile(path, data); err != nil {
		return usageErr(err)
	}
	for _, n := range notes {
		fmt.Fprintf(errOut, "talaria: %s\n", n)
	}
	s := talaria.SettingsOf(cfg)
	fileOnly, err := config.LoadBytes(home, data, func(string) string { return "" })
	if err != nil { // checked above with this shell's environment; without it, it loads the same
		return usagef("%s would not load: %v", path, oneLine(err))
	}
	fmt.Fprintln(cmd.OutOrStdout(), savedLine(change, fileOnly.Model, path))
	if cfg.Model.APIKeyEnv != "" && os.Getenv(cfg.Model.APIKeyEnv) == "" {
		fmt.Fprintf(errOut, "talaria: note: %s is not set in this shell; the process running turns (serve) reads it from its own environment\n", cfg.Model.APIKeyEnv)
	}
	if line := shellOverrides(os.Getenv, s); line != "" {
		fmt.Fprintln(errOut, line)
	}
	reportServePickup(cmd.Context(), errOut, home, s, written)
	return nil
}

// checkedConfig loads data as config.yaml would be loaded (strictly), to
// refuse writing a file that would not load. It is checked in memory: a
// document holding a key is written nowhere but config.yaml. This shell's
// model variables are left out: the settings are the file's, as a serve
// without them would use them.
func checkedConfig(home string, data []byte) (config.Config, error) {
	cfg, err := config.LoadBytes(home, data, withoutModelEnv(os.Getenv))
	if err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// withoutModelEnv is getenv without the variables that override the
// model section.
func withoutModelEnv(getenv func(string) string) func(string) string {
	return func(k string) string {
		switch k {
		case "OPENAI_BASE_URL", "OPENAI_API_KEY", "TALARIA_MODEL":
			return ""
		}
		return getenv(k)
	}
}

// writeConfigFile replaces path atomically with data, mode 0600.
func writeConfigFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.yaml")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// shellOverrides says when this shell's variables override config.yaml
// for commands run here. Pure.
func shellOverrides(getenv func(string) string, s talaria.ModelSettings) string {
	var set []string
	if v := getenv("OPENAI_BASE_URL"); v != "" && talaria.RedactURL(strings.TrimRight(v, "/")) != s.BaseURL {
		set = append(set, "OPENAI_BASE_URL")
	}
	if v := getenv("TALARIA_MODEL"); v != "" && v != s.Model {
		set = append(set, "TALARIA_MODEL")
	}
	if len(set) == 0 {
		return ""
	}
	verb := "overrides"
	if len(set) > 1 {
		verb = "override"
	}
	return fmt.Sprintf("talaria: note: %s in this shell %s config.yaml for a chat run here without serve", strings.Join(set, " and "), verb)
}

// reportServePickup waits (up to 5 s) for a running serve to read
// config.yaml after written, and says what it uses then.
func reportServePickup(ctx context.Context, errOut io.Writer, home string, want talaria.ModelSettings, written time.Time) {
	info, err := talaria.ReadServeInfo(home)
	if err != nil || !serveHolds(home) {
		return
	}
	if len(info.ModelEnv) > 0 {
		fmt.Fprintf(errOut, "talaria: note: talaria serve (pid %d) has %s in its environment, which override config.yaml there\n",
			info.PID, strings.Join(info.ModelEnv, ", "))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if line, done := pickupLine(info, want, written); done {
			fmt.Fprintln(errOut, line)
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			fmt.Fprintf(errOut, "talaria: talaria serve (pid %d) has not read config.yaml yet; it still uses %s (see its output, or restart it)\n",
				info.PID, talaria.ServeSettings(info).Summary())
			return
		}
		time.Sleep(100 * time.Millisecond)
		if next, err := talaria.ReadServeInfo(home); err == nil {
			info = next
		}
	}
}

// pickupLine says what serve uses once it has read config.yaml after
// written (done), comparing with want, the file's settings. A serve that
// published before written has not seen the change, whatever it shows:
// a change of the key alone looks the same. Pure.
func pickupLine(info talaria.ServeInfo, want talaria.ModelSettings, written time.Time) (line string, done bool) {
	if info.ModelSettings == nil || !info.ConfigLoadedAt.After(written) {
		return "", false
	}
	got := talaria.ServeSettings(info)
	if got.Summary() == want.Summary() {
		return fmt.Sprintf("talaria serve (pid %d) uses it for new model calls", info.PID), true
	}
	return fmt.Sprintf("talaria: talaria serve (pid %d) read config.yaml but uses %s (its environment overrides config.yaml)",
		info.PID, got.Summary()), true
}

// serveHolds reports whether a process holds this home's lock (serve.json
// may be left over from one that was killed).
func serveHolds(home string) bool {
	lock, err := talaria.TryLock(home)
	if err == nil {
		lock.Release()
		return false
	}
	return errors.Is(err, talaria.ErrLocked)
}

func newModelShowCommand() *cobra.Command {
	var out outputFormat
	c := &cobra.Command{
		Use:   "show",
		Short: "Print the model settings turns use (serve's when it runs)",
		Long: `show prints the model settings turns use: those of the running serve for this
TALARIA_HOME, else this configuration's (a chat then embeds its own worker with
them). Keys are never printed, only whether one is set. It only reads.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON := out.json()
			view, err := effectiveModel()
			if err != nil {
				return err
			}
			if view.Settings.Configured {
				view.Known = modelKnowledge(cmd.Context(), view.Settings.Model)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), view)
			}
			printModelView(cmd.OutOrStdout(), view)
			return nil
		},
	}
	out.register(c)
	return c
}

// modelView is the model settings turns use and where they come from.
type modelView struct {
	// Source is "serve" or "config".
	Source   string                `json:"source"`
	ServePID int                   `json:"serve_pid,omitempty"`
	Settings talaria.ModelSettings `json:"settings"`
	// ServeEnv names serve's variables that override config.yaml.
	ServeEnv []string `json:"serve_env,omitempty"`
	// Known is what this configuration knows of the model: window, output
	// cap, prices and vision, with where each comes from (model show only).
	Known *talaria.ModelInfo `json:"model_info,omitempty"`
}

// effectiveModel reads serve's settings when a serve runs, else the
// configuration's; it creates nothing.
func effectiveModel() (modelView, error) {
	home, err := config.HomeDir(os.Getenv)
	if err != nil {
		return modelView{}, usageErr(err)
	}
	if v, ok := serveModel(home); ok {
		return v, nil
	}
	cfg, err := config.Load(home, os.Getenv)
	if err != nil {
		return modelView{}, usageErr(err)
	}
	return modelView{Source: "config", Settings: talaria.SettingsOf(cfg)}, nil
}

// serveModel is the running serve's model view, if one runs.
func serveModel(home string) (modelView, bool) {
	info, err := talaria.ReadServeInfo(home)
	if err != nil || !serveHolds(home) {
		return modelView{}, false
	}
	return modelView{Source: "serve", ServePID: info.PID, Settings: talaria.ServeSettings(info), ServeEnv: info.ModelEnv}, true
}

// printModelView prints v as text.
func printModelView(w io.Writer, v modelView) {
	if v.Source == "serve" {
		fmt.Fprintf(w, "model settings used by turns (from talaria serve pid %d):\n", v.ServePID)
	} else {
		fmt.Fprintln(w, "model settings used by turns (no serve runs: from this configuration, which a chat's own worker uses):")
	}
	s := v.Settings
	if !s.Configured {
		fmt.Fprintf(w, "  no model endpoint is configured: run 'talaria model set --base-url URL --model NAME'\n")
		return
	}
	key := "not set"
	if s.APIKeySet {
		key = "set (********)"
	}
	if s.APIKeyEnv != "" {
		key += " from $" + s.APIKeyEnv
	}
	fmt.Fprintf(w, "  base_url: %s\n  model: %s\n  api_key: %s\n", s.BaseURL, s.Model, key)
	printModelKnowledge(w, v.Known)
	if s.Timeout != "" {
		fmt.Fprintf(w, "  timeout: %s\n  max_retry_after: %s\n  attempts: %d\n  stream: %t\n", s.Timeout, s.MaxRetryAfter, s.Attempts, s.Stream)
	}
	for i, f := range s.Fallbacks {
		fmt.Fprintf(w, "  fallback %d: %s", i+1, f.BaseURL)
		if f.Model != "" {
			fmt.Fprintf(w, " (model %s)", f.Model)
		}
		fmt.Fprintln(w)
	}
	if len(v.ServeEnv) > 0 {
		fmt.Fprintf(w, "  (serve's environment sets %s, which override config.yaml)\n", strings.Join(v.ServeEnv, ", "))
	}
}

func newSetupCommand() *cobra.Command {
	var f modelSetFlags
	c := &cobra.Command{
		Use:   "setup",
		Short: "Set up the model endpoint, asking on a terminal",
		Long: `setup asks, on a terminal, for the provider (its wire format), the model endpoint,
the model name and the variable holding the API key, and writes them like
'talaria model set'. Without
a terminal it takes the same flags as 'talaria model set'.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			change, err := f.change(cmd.InOrStdin(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if change == (modelChange{}) {
				if !ttyInput(cmd.InOrStdin()) {
					return usagef("setup asks on a terminal; without one give the flags of 'talaria model set' (--base-url URL --model NAME)")
				}
				var err error
				if change, err = askModel(cmd); err != nil {
					return err
				}
			}
			return setModel(cmd, change)
		},
	}
	f.register(c)
	return c
}

// askModel asks for the settings on the terminal, offering the current
// ones as defaults.
func askModel(cmd *cobra.Command) (modelChange, error) {
	cur := talaria.ModelSettings{BaseURL: "http://localhost:11434/v1", Model: "llama3.1"}
	if v, err := effectiveModel(); err == nil && v.Settings.Configured {
		cur = v.Settings
	}
	in := bufio.NewReader(cmd.InOrStdin())
	errOut := cmd.ErrOrStderr()
	ask := func(question, def string) (string, error) {
		fmt.Fprintf(errOut, "%s [%s]: ", question, def)
		line, err := in.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", err
		}
		if line = strings.TrimSpace(line); line != "" {
			return line, nil
		}
		if errors.Is(err, io.EOF) && line == "" && def == "" {
			return "", nil
		}
		return def, nil
	}
	var c modelChange
	var err error
	provider := cmp.Or(cur.Provider, config.ProviderOpenAI)
	if c.Provider, err = ask("Provider ("+strings.Join(config.Providers, ", ")+")", provider); err != nil {
		return c, err
	}
	c.Provider = strings.ToLower(c.Provider)
	endpoint, name := cur.BaseURL, cur.Model
	if c.Provider != provider {
		// Another provider: its own endpoint and a model it serves.
		opts := config.ProviderOptions{Provider: c.Provider}
		endpoint, name = opts.DefaultEndpoint(), suggestedModel[c.Provider]
	}
	if c.BaseURL, err = ask("Model endpoint (base URL)", endpoint); err != nil {
		return c, err
	}
	if c.Name, err = ask("Model name", name); err != nil {
		return c, err
	}
	if c.APIKeyEnv, err = ask("Variable holding the API key (empty: none)", cur.APIKeyEnv); err != nil {
		return c, err
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	return c, nil
}

// suggestedModel is the model setup offers for a provider chosen anew.
var suggestedModel = map[string]string{
	config.ProviderOpenAI:    "gpt-4.1-mini",
	config.ProviderAnthropic: "claude-sonnet-4-5",
	config.ProviderResponses: "o4-mini",
	config.ProviderOllama:    "llama3.1",
}

// ttyInput reports whether r is a terminal.
func ttyInput(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
