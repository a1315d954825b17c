package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/talaria-agent/talaria"

	"gopkg.in/yaml.v3"

	"github.com/talaria-agent/talaria/config"
)

// configJSON is 'talaria config -o json': the configuration under its
// config.yaml keys (secrets masked), the running serve's model settings
// when one runs, and the environment tools inherit.
type configJSON struct {
	Home   string         `json:"home"`
	Config map[string]any `json:"config"`
	// ServeModel is the model settings turns use, from the running serve.
	ServeModel *modelView  `json:"serve_model,omitempty"`
	ToolEnv    toolEnvJSON `json:"tool_env"`
}

type toolEnvJSON struct {
	Passed  []string `json:"passed"`
	Refused []string `json:"refused,omitempty"`
}

// writeConfigJSON writes cfg (already masked) as one JSON object whose
// keys are config.yaml's.
func writeConfigJSON(w io.Writer, cfg config.Config, serve modelView, serving bool) error {
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encode configuration: %w", err)
	}
	var tree map[string]any
	if err := yaml.Unmarshal(data, &tree); err != nil {
		return fmt.Errorf("encode configuration: %w", err)
	}
	passed, refused := talaria.PassedEnvNames(cfg.Terminal.EnvPassthrough)
	out := configJSON{Home: cfg.Home, Config: tree, ToolEnv: toolEnvJSON{Passed: passed, Refused: refused}}
	if serving {
		out.ServeModel = &serve
	}
	return writeJSON(w, out)
}

// commented is v as YAML comment lines, so config's text output stays YAML.
func commented(v modelView) string {
	var buf bytes.Buffer
	printModelView(&buf, v)
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		b.WriteString("# " + line + "\n")
	}
	return b.String()
}
