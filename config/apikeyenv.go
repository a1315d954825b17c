package config

// resolveKeyEnv reads the key from the variable model.api_key_env names
// when no key is set (in the file or by OPENAI_API_KEY): a key need not be
// written into config.yaml.
func (m *Model) resolveKeyEnv(getenv func(string) string) {
	if m.APIKey == "" && m.APIKeyEnv != "" {
		m.APIKey = getenv(m.APIKeyEnv)
	}
}
