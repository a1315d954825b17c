package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/talaria-agent/talaria"

	"gopkg.in/yaml.v3"

	"github.com/talaria-agent/talaria/config"
)

// modelChange is what 'talaria model set' writes; empty fields are left
// as the file has them.
type modelChange struct {
	Provider, BaseURL, Name, APIKeyEnv, APIKey string
}

// envNamePattern is a portable environment variable name.
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkChange refuses a change that cannot work, in one line. Pure.
func checkChange(c modelChange) error {
	if c == (modelChange{}) {
		return errors.New("nothing to set: give --provider, --base-url, --model, --api-key-env or --api-key-stdin")
	}
	if c.Provider != "" && !slices.Contains(config.Providers, c.Provider) {
		return fmt.Errorf("--provider %q is not one of %s", c.Provider, strings.Join(config.Providers, ", "))
	}
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--base-url %q is not an http(s) URL (e.g. http://localhost:11434/v1)", talaria.RedactURL(c.BaseURL))
		}
		if u.User != nil {
			return errors.New("--base-url must not hold a user or password (they would be shown wherever the URL is): " +
				"give the key with --api-key-env VAR or --api-key-stdin")
		}
	}
	if c.Name != "" && strings.TrimSpace(c.Name) != c.Name {
		return fmt.Errorf("--model %q has leading or trailing spaces", c.Name)
	}
	if c.APIKeyEnv != "" && !envNamePattern.MatchString(c.APIKeyEnv) {
		return fmt.Errorf("--api-key-env %q is not a variable name (letters, digits and _)", c.APIKeyEnv)
	}
	if c.APIKeyEnv != "" && c.APIKey != "" {
		return errors.New("--api-key-env and --api-key-stdin exclude each other")
	}
	return nil
}

// applyModelChange sets the model keys of a config.yaml document, keeping
// its other keys and its comments. Top-level variable-style keys that
// would override the new values (OPENAI_BASE_URL, TALARIA_MODEL,
// OPENAI_API_KEY) are removed, and named in notes. Pure.
func applyModelChange(data []byte, c modelChange) (out []byte, notes []string, err error) {
	var doc yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, nil, fmt.Errorf("the file is not valid YAML (%v): fix it or remove it first", err)
		}
	}
	var prefix []byte
	if len(doc.Content) == 0 || (doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null") {
		// Empty, or only comments: they stay above the new keys.
		if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 {
			prefix = append(append([]byte(nil), trimmed...), '\n')
		}
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("line %d: the file must hold keys and values (a YAML mapping)", root.Line)
	}
	model := mapping(root, "model")
	if model == nil {
		return nil, nil, errors.New("model: must hold keys (base_url, name, ...)")
	}
	set := func(key, value string) {
		if value != "" {
			setScalar(model, key, value)
		}
	}
	if c.Provider != "" && c.BaseURL == "" && scalar(model, "provider", config.ProviderOpenAI) != c.Provider && removeKey(model, "base_url") {
		// The old endpoint speaks another wire format, and would be sent
		// the new provider's key.
		notes = append(notes, "removed model.base_url (it was the endpoint of another provider): turns use "+
			c.Provider+"'s own endpoint; give --base-url for another")
	}
	set("provider", c.Provider)
	set("base_url", c.BaseURL)
	set("name", c.Name)
	set("api_key_env", c.APIKeyEnv)
	set("api_key", c.APIKey)
	if c.APIKeyEnv != "" && removeKey(model, "api_key") {
		notes = append(notes, "removed model.api_key (a key in the file would win over api_key_env)")
	}
	overrides := map[string]bool{"OPENAI_BASE_URL": c.BaseURL != "", "TALARIA_MODEL": c.Name != "",
		"OPENAI_API_KEY": c.APIKeyEnv != "" || c.APIKey != ""}
	for _, k := range []string{"OPENAI_BASE_URL", "TALARIA_MODEL", "OPENAI_API_KEY"} {
		if overrides[k] && removeKey(root, k) {
			notes = append(notes, fmt.Sprintf("removed the top-level %s (it would override model:)", k))
		}
	}
	buf := bytes.NewBuffer(prefix)
	enc := yaml.NewEncoder(buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, nil, fmt.Errorf("encode config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, nil, fmt.Errorf("encode config: %w", err)
	}
	return buf.Bytes(), notes, nil
}

// mapping returns the mapping under key in m, adding an empty one when
// absent (or null); nil when key holds something else.
func mapping(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != key {
			continue
		}
		v := m.Content[i+1]
		if v.Kind == yaml.ScalarNode && (v.Tag == "!!null" || v.Value == "") {
			*v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", LineComment: v.LineComment}
		}
		if v.Kind != yaml.MappingNode {
			return nil
		}
		return v
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v
}

// setScalar sets key in m to the string value, keeping the key's comments.
func setScalar(m *yaml.Node, key, value string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			m.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value,
				LineComment: old.LineComment, HeadComment: old.HeadComment, FootComment: old.FootComment}
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
}

// scalar is the value of key in m, def when absent or empty.
func scalar(m *yaml.Node, key, def string) string {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i+1].Kind == yaml.ScalarNode && m.Content[i+1].Value != "" {
			return strings.ToLower(m.Content[i+1].Value)
		}
	}
	return def
}

// removeKey removes key from m; false when it was not there.
func removeKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return true
		}
	}
	return false
}

// savedLine says what model set wrote to path and, from the file's model
// settings alone (no environment), whether they name an endpoint. Pure.
func savedLine(c modelChange, file config.Model, path string) string {
	var what []string
	if c.Provider != "" {
		what = append(what, "provider "+c.Provider)
	}
	if c.BaseURL != "" {
		what = append(what, "base_url "+talaria.RedactURL(c.BaseURL))
	}
	if c.Name != "" {
		what = append(what, "model "+c.Name)
	}
	if c.APIKeyEnv != "" {
		what = append(what, "api_key_env "+c.APIKeyEnv)
	}
	if c.APIKey != "" {
		what = append(what, "the API key")
	}
	saved := strings.Join(what, ", ")
	if n := len(what); n > 1 {
		saved = strings.Join(what[:n-1], ", ") + " and " + what[n-1]
	}
	var uses string
	openai := config.Model{ProviderOptions: file.ProviderOptions, APIKey: "x"}.Endpoint()
	switch {
	case file.BaseURL != "" || file.IsOllama():
		uses = fmt.Sprintf("turns use model %s at %s", file.Name, talaria.RedactURL(file.Endpoint()))
	case file.APIKey != "":
		uses = fmt.Sprintf("no base_url is set, so turns use model %s at %s (the provider's own, as a key is set)", file.Name, openai)
	case file.APIKeyEnv != "":
		uses = fmt.Sprintf("no base_url is set, so turns use model %s at %s (the provider's own) when %s is set where they run; "+
			"for another endpoint give --base-url URL", file.Name, openai, file.APIKeyEnv)
	default:
		uses = "no model endpoint is configured yet: give --base-url URL"
	}
	return fmt.Sprintf("saved %s to %s; %s", saved, path, uses)
}
