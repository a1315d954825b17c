package memory

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/config"
)

// Embedder turns texts into vectors (an OpenAI-compatible /v1/embeddings
// endpoint), for recall by meaning.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// DefaultEmbeddingModel is the model asked for vectors when
// memory.embeddings.model is empty.
const DefaultEmbeddingModel = "text-embedding-3-small"

// openAIEmbedder asks an OpenAI-compatible endpoint for vectors.
type openAIEmbedder struct {
	client *openai.Client
	model  string
}

// NewEmbedder is the embedder of the endpoint e (base URL ".../v1"; its key
// read through getenv from e.APIKeyEnv); nil when e has no base URL.
func NewEmbedder(e config.Endpoint, getenv func(string) string, hc *http.Client) Embedder {
	if e.BaseURL == "" {
		return nil
	}
	key := ""
	if e.APIKeyEnv != "" && getenv != nil {
		key = getenv(e.APIKeyEnv)
	}
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = strings.TrimRight(e.BaseURL, "/")
	if hc != nil {
		cfg.HTTPClient = hc
	}
	return &openAIEmbedder{client: openai.NewClientWithConfig(cfg), model: cmp.Or(e.Model, DefaultEmbeddingModel)}
}

// Embed returns one vector per text, in order.
func (o *openAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	res, err := o.client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Input: texts, Model: openai.EmbeddingModel(o.model)})
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w: %w", ErrUnavailable, err)
	}
	out := make([][]float32, len(texts))
	for _, d := range res.Data {
		if d.Index >= 0 && d.Index < len(out) {
			out[d.Index] = d.Embedding
		}
	}
	for i, v := range out {
		if len(v) == 0 {
			return nil, fmt.Errorf("embeddings: %w: no vector for text %d", ErrUnavailable, i)
		}
	}
	return out, nil
}

// Cosine is the cosine similarity of a and b (0 when either is empty or
// their lengths differ). Pure.
func Cosine(a, b []float32) float64 {
	if len(a) == 0 || len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
