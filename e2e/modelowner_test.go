package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestModelSettingsBelongToServe: turns use serve's model settings. A
// client whose shell names another endpoint and model says, in one line,
// which are used; -m chooses the model of one turn; changing config.yaml
// while serve runs changes the next turn's model without a restart; a
// broken file keeps the previous settings with one line naming file and
// line; config and model show say what turns use.
func TestModelSettingsBelongToServe(t *testing.T) {
	t.Parallel()
	model := fakellm.New()
	defer model.Close()
	u := newUser(t, model.URL())
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "TALARIA_MODEL"} {
		delete(u.env, k)
	}
	if _, stderr, code := u.run(time.Minute, "model", "set", "--base-url", model.URL(), "--model", "first"); code != 0 {
		t.Fatalf("model set: %d\n%s", code, stderr)
	}
	if fi, err := os.Stat(filepath.Join(u.home, "config.yaml")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config.yaml: %v %v", fi, err)
	}
	srv := u.serve(0)

	// A shell with its own endpoint and model: serve's are used, and said.
	other := *u
	other.env = map[string]string{"TALARIA_HOME": u.home, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "TALARIA_MODEL": "mine"}
	model.Push(fakellm.TextStep("one"))
	res, stderr, code := other.chatJSON(3*time.Minute, "-q", "hello")
	if code != 0 || res.Model != "first" {
		t.Fatalf("exit %d, model %q\n%s", code, res.Model, stderr)
	}
	want := "talaria: using talaria serve's model endpoint " + model.URL() + " (model first); " +
		"OPENAI_BASE_URL=http://127.0.0.1:9/v1 and TALARIA_MODEL=mine in this shell are not used"
	if !strings.Contains(stderr, want) {
		t.Fatalf("no warning %q in:\n%s", want, stderr)
	}
	if got := lastModel(t, model); got != "first" {
		t.Fatalf("the model was asked for %q, want first", got)
	}

	// -m is this turn's model, shown in the result.
	model.Push(fakellm.TextStep("two"))
	res, stderr, code = u.chatJSON(3*time.Minute, "-q", "hello", "-m", "special")
	if code != 0 || res.Model != "special" || lastModel(t, model) != "special" {
		t.Fatalf("-m: exit %d, result model %q, asked %q\n%s", code, res.Model, lastModel(t, model), stderr)
	}
	if strings.Contains(stderr, "not used") {
		t.Fatalf("a shell without model variables was warned:\n%s", stderr)
	}

	// send and cron run-now from a shell without TALARIA_MODEL run with
	// serve's model (they used to run as the built-in default).
	model.Push(fakellm.TextStep("sent"), fakellm.TextStep("scheduled"))
	if _, stderr, code := u.run(time.Minute, "send", "sent-session", "hello"); code != 0 {
		t.Fatalf("send: %d\n%s", code, stderr)
	}
	waitModel(t, model, 3, "first")
	if _, stderr, code := u.run(time.Minute, "cron", "add", "--name", "j", "--schedule", "@daily", "--prompt", "hi"); code != 0 {
		t.Fatalf("cron add: %d\n%s", code, stderr)
	}
	if _, stderr, code := u.run(time.Minute, "cron", "run-now", "j"); code != 0 {
		t.Fatalf("cron run-now: %d\n%s", code, stderr)
	}
	waitModel(t, model, 4, "first")

	// config.yaml changes while serve runs: the next turn uses them.
	if _, stderr, code := u.run(time.Minute, "model", "set", "--model", "second"); code != 0 || !strings.Contains(stderr, "uses it for new model calls") {
		t.Fatalf("model set --model second: %d\n%s\nserve:\n%s", code, stderr, serveOutput(srv))
	}
	model.Push(fakellm.TextStep("three"))
	if res, stderr, code := u.chatJSON(3*time.Minute, "-q", "hello"); code != 0 || res.Model != "second" || lastModel(t, model) != "second" {
		t.Fatalf("after the change: exit %d, result model %q, asked %q\n%s", code, res.Model, lastModel(t, model), stderr)
	}
	if !strings.Contains(serveOutput(srv), "config reloaded: model second at "+model.URL()) {
		t.Fatalf("serve did not say it reloaded:\n%s", serveOutput(srv))
	}

	// A file that does not load keeps the previous settings, said once.
	cfgPath := filepath.Join(u.home, "config.yaml")
	good, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, append(append([]byte(nil), good...), []byte("modle: third\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	waitForServeLine(t, srv, "keeping the previous settings")
	line := lineWith(serveOutput(srv), "keeping the previous settings")
	if !strings.Contains(line, "config.yaml:") || !strings.Contains(line, "modle") {
		t.Fatalf("the warning does not name file, line and key: %q", line)
	}
	// The client itself refuses the broken file (strict configuration).
	if _, stderr, code := u.run(time.Minute, "chat", "-q", "hello"); code != 2 || !strings.Contains(stderr, "modle") {
		t.Fatalf("a chat with a broken config.yaml: exit %d\n%s", code, stderr)
	}
	if out, _, _ := u.run(time.Minute, "model", "show", "-o", "json"); !strings.Contains(out, `"model": "second"`) {
		t.Fatalf("serve did not keep its settings: %s", out)
	}
	// A key that needs a restart is named; the model settings still apply.
	fixed := strings.Replace(string(good), "name: second", "name: fourth", 1) + "max_iterations: 12\n"
	if err := os.WriteFile(cfgPath, []byte(fixed), 0o600); err != nil {
		t.Fatal(err)
	}
	waitForServeLine(t, srv, "config reloaded: model fourth")
	waitForServeLine(t, srv, "restart talaria serve") // said just after
	if line := lineWith(serveOutput(srv), "restart talaria serve"); !strings.Contains(line, "max_iterations") {
		t.Fatalf("no restart line naming max_iterations:\n%s", serveOutput(srv))
	}

	// What turns use is visible.
	stdout, stderr, code := u.run(time.Minute, "config", "-o", "json")
	if code != 0 {
		t.Fatalf("config -o json: %d\n%s", code, stderr)
	}
	var cfg struct {
		Config map[string]any `json:"config"`
		Serve  *struct {
			Source   string `json:"source"`
			PID      int    `json:"serve_pid"`
			Settings struct {
				Model     string `json:"model"`
				BaseURL   string `json:"base_url"`
				APIKeySet bool   `json:"api_key_set"`
			} `json:"settings"`
		} `json:"serve_model"`
	}
	if err := json.Unmarshal([]byte(stdout), &cfg); err != nil {
		t.Fatalf("config -o json: %v\n%s", err, stdout)
	}
	if cfg.Serve == nil || cfg.Serve.Source != "serve" || cfg.Serve.PID != srv.cmd.Process.Pid ||
		cfg.Serve.Settings.Model != "fourth" || cfg.Serve.Settings.BaseURL != model.URL() || cfg.Config["max_iterations"] == nil {
		t.Fatalf("config -o json: %s", stdout)
	}
	stdout, _, _ = u.run(time.Minute, "config")
	if !strings.Contains(stdout, "# model settings used by turns (from talaria serve pid") || !strings.Contains(stdout, "#   model: fourth") {
		t.Fatalf("config does not show serve's model settings:\n%s", stdout)
	}
	stdout, _, _ = u.run(time.Minute, "model", "show")
	if !strings.Contains(stdout, "from talaria serve pid") || !strings.Contains(stdout, "model: fourth") || !strings.Contains(stdout, "api_key: not set") {
		t.Fatalf("model show:\n%s", stdout)
	}
}

// waitModel waits for the model's n-th request and checks the model it asked for.
func waitModel(t *testing.T, model *fakellm.Server, n int, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := model.WaitRequests(ctx, n); err != nil {
		t.Fatal(err)
	}
	if got := model.Requests()[n-1].Body.Model; got != want {
		t.Fatalf("request %d asked for model %q, want %q", n, got, want)
	}
}

// lastModel is the model the scripted server was last asked for.
func lastModel(t *testing.T, model *fakellm.Server) string {
	t.Helper()
	reqs := model.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model was never called")
	}
	return reqs[len(reqs)-1].Body.Model
}

// lineWith is the first line of s containing sub.
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// serveOutput is what serve wrote on stderr so far.
func serveOutput(s *server) string {
	if lw, ok := s.cmd.Stderr.(*lockedWriter); ok {
		lw.mu.Lock()
		defer lw.mu.Unlock()
	}
	return s.stderr.String()
}

// waitForServeLine waits (10 s at most) for serve to print a line holding sub.
func waitForServeLine(t *testing.T, s *server, sub string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(serveOutput(s), sub) {
		if time.Now().After(deadline) {
			t.Fatalf("serve printed no line with %q within 10s:\n%s", sub, serveOutput(s))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSetupAsksOnATerminal: setup asks for the endpoint, the model and the
// key's variable on a terminal and writes them like model set; without a
// terminal and without flags it says what to give instead.
func TestSetupAsksOnATerminal(t *testing.T) {
	t.Parallel()
	model := fakellm.New()
	defer model.Close()
	u := newUser(t, model.URL())
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "TALARIA_MODEL"} {
		delete(u.env, k)
	}
	if _, stderr, code := u.run(time.Minute, "setup"); code != 2 || !strings.Contains(stderr, "--base-url URL --model NAME") {
		t.Fatalf("setup without a terminal: exit %d\n%s", code, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	term := u.terminal(ctx, "setup")
	term.waitScreen("Provider (openai, anthropic, responses, ollama) [openai]", 30*time.Second)
	term.type_("\r")
	term.waitScreen("Model endpoint", 30*time.Second)
	term.type_(model.URL() + "\r")
	term.waitScreen("Model name", 10*time.Second)
	term.type_("asked-model\r")
	term.waitScreen("Variable holding the API key", 10*time.Second)
	term.type_("MY_MODEL_KEY\r")
	term.waitScreen("turns use model asked-model at "+model.URL(), 20*time.Second)
	data, err := os.ReadFile(filepath.Join(u.home, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"base_url: " + model.URL(), "name: asked-model", "api_key_env: MY_MODEL_KEY"} {
		if !strings.Contains(string(data), want) {
			t.Fatalf("config.yaml lacks %q:\n%s", want, data)
		}
	}
}
