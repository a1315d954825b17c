package fakellm_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// startServer starts a fake server that is closed when the test ends.
func startServer(t *testing.T, opts ...fakellm.Option) *fakellm.Server {
	t.Helper()
	s, err := fakellm.Start(opts...)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// newClient returns a go-openai client for the server with its own
// transport, whose idle connections are closed when the test ends.
func newClient(t *testing.T, s *fakellm.Server, key string) *openai.Client {
	t.Helper()
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = s.URL()
	tr := &http.Transport{}
	cfg.HTTPClient = &http.Client{Transport: tr}
	t.Cleanup(tr.CloseIdleConnections)
	return openai.NewClientWithConfig(cfg)
}

// testCtx returns a context bounded by a generous deadline.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func chatRequest(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:    "fake-model",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}},
	}
}

// streamResult is a streamed answer reassembled the way an agent does it.
type streamResult struct {
	text, reasoning string
	calls           []openai.ToolCall // reassembled by index
	heads           []openai.ToolCall // first delta of each call
	argPieces       map[int]int       // argument deltas per call index
	finish          openai.FinishReason
	usage           *openai.Usage
	usageChunks     int // chunks with usage and no choices
	chunks          int
}

// collectStream reads a stream to its end. It returns what was received
// before an error, and the error if the stream did not end with io.EOF.
func collectStream(stream *openai.ChatCompletionStream) (streamResult, error) {
	res := streamResult{argPieces: map[int]int{}}
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return res, err
		}
		res.chunks++
		if chunk.Usage != nil {
			res.usage = chunk.Usage
			if len(chunk.Choices) == 0 {
				res.usageChunks++
			}
		}
		for _, ch := range chunk.Choices {
			res.text += ch.Delta.Content
			res.reasoning += ch.Delta.ReasoningContent
			if ch.FinishReason != "" {
				res.finish = ch.FinishReason
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Index == nil {
					return res, errors.New("tool call delta without index")
				}
				i := *tc.Index
				for len(res.calls) <= i {
					res.calls = append(res.calls, openai.ToolCall{})
				}
				if tc.ID != "" {
					res.heads = append(res.heads, tc)
					res.calls[i].ID = tc.ID
					res.calls[i].Type = tc.Type
					res.calls[i].Function.Name = tc.Function.Name
				}
				if tc.Function.Arguments != "" {
					res.argPieces[i]++
					res.calls[i].Function.Arguments += tc.Function.Arguments
				}
			}
		}
	}
}

// flags summarises a request record for failure messages.
func flags(r fakellm.Request) string {
	return fmt.Sprintf("#%d status=%d scripted=%v exhausted=%v cancelled=%v broken=%v finished=%v",
		r.Index, r.Status, r.Scripted, r.Exhausted, r.Cancelled, r.Broken, !r.Finished.IsZero())
}

// allFlags summarises request records for failure messages.
func allFlags(rs []fakellm.Request) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, flags(r))
	}
	return strings.Join(parts, "; ")
}
