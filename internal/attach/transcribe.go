package attach

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// DefaultTranscriptionModel is the model asked when none is configured.
const DefaultTranscriptionModel = "whisper-1"

// Transcriber turns speech into text through an OpenAI-compatible
// /v1/audio/transcriptions endpoint (OpenAI, Groq, whisper.cpp's server,
// faster-whisper servers, LocalAI ...).
type Transcriber struct {
	client *openai.Client
	model  string
}

// ErrNoTranscriber: no transcription endpoint is configured.
var ErrNoTranscriber = errors.New("no transcription endpoint is configured (transcription.base_url)")

// NewTranscriber is a transcriber for the endpoint at baseURL (".../v1"),
// with key (may be empty for a local server) and model (empty:
// whisper-1); nil when baseURL is empty. hc nil: http.DefaultClient.
func NewTranscriber(baseURL, key, model string, hc *http.Client) *Transcriber {
	if baseURL == "" {
		return nil
	}
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = strings.TrimRight(baseURL, "/")
	if hc != nil {
		cfg.HTTPClient = hc
	}
	return &Transcriber{client: openai.NewClientWithConfig(cfg), model: cmp.Or(model, DefaultTranscriptionModel)}
}

// maxTranscriptBytes bounds a transcript: a 25 MiB memo is a long talk,
// but a transcript is a message, not a book.
const maxTranscriptBytes = 32 << 10

// Transcribe returns the text spoken in data (a file named name); a nil t
// is ErrNoTranscriber.
func (t *Transcriber) Transcribe(ctx context.Context, name string, data []byte) (string, error) {
	if t == nil {
		return "", ErrNoTranscriber
	}
	res, err := t.client.CreateTranscription(ctx, openai.AudioRequest{
		Model: t.model, FilePath: name, Reader: bytes.NewReader(data), Format: openai.AudioResponseFormatJSON,
	})
	if err != nil {
		return "", fmt.Errorf("transcribe %s: %w", name, err)
	}
	text := strings.TrimSpace(res.Text)
	if len(text) > maxTranscriptBytes {
		text = strings.ToValidUTF8(text[:maxTranscriptBytes], "") + " …"
	}
	return text, nil
}
