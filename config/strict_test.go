package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStrictFile: every mistake in config.yaml is one line naming the
// file, the line and, where there is one, the key.
func TestStrictFile(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		yaml string
		want []string // substrings of the error, after the file path
	}{
		{"unknown top-level key", "model:\n  name: x\nmax_iteration: 5\n",
			[]string{`config.yaml:3: unknown key "max_iteration" at the top level (did you mean "max_iterations"?)`}},
		{"unknown nested key", "model:\n  base_url: http://x/v1\n  nmae: gpt\n",
			[]string{`config.yaml:3: unknown key "nmae" in model (did you mean "name"?)`}},
		{"misplaced section key", "modle:\n  name: x\n",
			[]string{`config.yaml:1: unknown key "modle" at the top level (did you mean "model"?)`}},
		{"no suggestion when nothing is close", "temporal:\n  zzzzzzzz: 1\n",
			[]string{`config.yaml:2: unknown key "zzzzzzzz" in temporal`}},
		{"deeply nested", "loop:\n  guardrail:\n    warn_after_failure: 2\n",
			[]string{`config.yaml:3: unknown key "warn_after_failure" in loop.guardrail (did you mean "warn_after_failures"?)`}},
		{"inside a list", "fallback_providers:\n  - base_url: http://a/v1\n  - base_url: http://b/v1\n    apikey: k\n",
			[]string{`config.yaml:4: unknown key "apikey" in fallback_providers[1] (did you mean "api_key"?)`}},
		{"two unknown keys, in line order", "tools:\n  enabld: [x]\nlog_levl: info\n",
			[]string{`config.yaml:2: unknown key "enabld" in tools`, `; `, `config.yaml:3: unknown key "log_levl"`}},
		{"env-style key misspelt", "OPENAI_BASEURL: http://x\n",
			[]string{`config.yaml:1: unknown key "OPENAI_BASEURL" at the top level (did you mean "OPENAI_BASE_URL"?)`}},
		{"wrong type, scalar", "max_iterations: lots\n",
			[]string{"config.yaml:1: max_iterations: cannot read `lots` into int"}},
		{"wrong type, nested", "model:\n  name: x\n  max_tokens: [1, 2]\n",
			[]string{"config.yaml:3: model.max_tokens: cannot read a list into int"}},
		{"wrong type, section is a scalar", "model: gpt-4o\n",
			[]string{"config.yaml:1: model: cannot read `gpt-4o` into config.Model"}},
		{"bad duration", "model:\n  timeout: soon\n",
			[]string{"config.yaml:2: model.timeout: cannot read `soon` into time.Duration (a duration needs a unit: 0s, 90s, 5m, 24h)"}},
		{"a duration without its unit", "gateway:\n  reset_idle: 0\n",
			[]string{"config.yaml:2: gateway.reset_idle: cannot read `0` into time.Duration (a duration needs a unit: 0s, 90s, 5m, 24h)"}},
		{"bad size", "tools:\n  output_quota: lots\n",
			[]string{`config.yaml:2: tools.output_quota: "lots" is not a size`}},
		{"env-style key with a bad value", "model:\n  name: x\nTALARIA_MAX_ITERATIONS: many\n",
			[]string{`config.yaml:3: TALARIA_MAX_ITERATIONS="many" is not a number`}},
		{"env-style key with a list", "OPENAI_API_KEY: [a, b]\n",
			[]string{`config.yaml:1: OPENAI_API_KEY must be a single value`}},
		{"syntax error", "model:\n  name: x\n  base_url: [\n",
			[]string{"config.yaml:3: did not find expected node content"}},
		{"tab indentation", "model:\n\tname: x\n",
			[]string{"config.yaml:2: found character that cannot start any token (a tab: YAML indents with spaces)"}},
		{"duplicate key", "model:\n  name: a\n  name: b\n",
			[]string{`config.yaml:3: model.name: mapping key "name" already defined at line 2`}},
		{"not a mapping", "- a\n- b\n",
			[]string{"config.yaml:1: the file must hold keys and values"}},
		{"two documents", "---\nmodel: {name: a}\n---\nmodel: {name: b, bogus_key: 1}\n",
			[]string{"config.yaml:3: a second YAML document (after ---): the file must hold one; join them"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			home := t.TempDir()
			path := filepath.Join(home, FileName)
			if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(home, env(nil))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			if !strings.Contains(msg, home+string(filepath.Separator)) {
				t.Errorf("error %q does not name the file %s", msg, path)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q\n  lacks %q", msg, w)
				}
			}
		})
	}
}

// TestStrictFileAccepts: everything Talaria documents still loads.
func TestStrictFileAccepts(t *testing.T) {
	t.Parallel()

	tests := []struct{ name, yaml string }{
		{"empty", ""},
		{"only comments", "# nothing yet\n"},
		{"null document", "~\n"},
		{"every section", `model:
  base_url: http://x/v1
  api_key: k
  name: m
  stream: false
  max_tokens: 100
  timeout: 2m
  max_retry_after: 10s
  attempts: 3
temporal:
  address: t:7233
  namespace: ns
  port: 7300
  tls_cert: /c
  tls_key: /k
  tls_ca: /ca
  tls_server_name: s
  api_key: tk
db: /tmp/x.db
max_iterations: 5
fallback_providers:
  - base_url: http://y/v1
    api_key: k2
    model: other
busy_input_mode: queue
approvals:
  mode: deny
  timeout: 1m
loop:
  empty_retries: 2
  guardrail:
    warn_after_failures: 2
compression:
  enabled: false
  context_window: 8192
  summary_cooldown: 5m
terminal:
  env_passthrough: [GOPATH]
tools:
  enabled: [read_file]
  write_roots: [/tmp]
  output_quota: 1GiB
web:
  allow_private: true
heartbeat_timeout: 30s
log_level: info
`},
		{"env-style keys", "OPENAI_BASE_URL: http://y/v1\nTALARIA_MAX_ITERATIONS: 7\nOPENAI_API_KEY:\n"},
		{"anchors and aliases", "model: &m\n  name: a\napprovals:\n  mode: deny\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, FileName), []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(home, env(nil)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestClosest(t *testing.T) {
	t.Parallel()

	known := []string{"model", "max_iterations", "db", "log_level"}
	tests := []struct{ key, want string }{
		{"modle", "model"},
		{"max_iteration", "max_iterations"},
		{"MODEL", "model"},
		{"dbb", "db"},
		{"xy", ""},
		{"completely_else", ""},
	}
	for _, tt := range tests {
		if got := closest(tt.key, append([]string(nil), known...)); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}
