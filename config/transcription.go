package config

import (
	"fmt"
	"net/url"
	"strings"
)

// Transcription configures the speech-to-text endpoint voice memos sent to
// the gateway are transcribed through: any OpenAI-compatible
// /v1/audio/transcriptions (OpenAI, Groq, whisper.cpp's server, ...).
// Without base_url voice memos are saved but not transcribed.
type Transcription struct {
	// BaseURL is the endpoint's base, e.g. https://api.openai.com/v1 or
	// http://127.0.0.1:8080/v1.
	BaseURL string `yaml:"base_url"`
	// Model is the model asked (default whisper-1).
	Model string `yaml:"model"`
	// APIKeyEnv names the variable holding the endpoint's key (none for a
	// local server). It never reaches a tool's subprocess.
	APIKeyEnv string `yaml:"api_key_env"`
}

// problems lists what is wrong with the transcription settings. Pure.
func (t Transcription) problems() []string {
	if t.BaseURL == "" {
		return nil
	}
	u, err := url.Parse(t.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return []string{fmt.Sprintf("transcription.base_url %q must be an http(s) URL", t.BaseURL)}
	}
	if t.APIKeyEnv != "" && strings.ContainsAny(t.APIKeyEnv, "= \t") {
		return []string{fmt.Sprintf("transcription.api_key_env %q must be a variable name", t.APIKeyEnv)}
	}
	return nil
}
