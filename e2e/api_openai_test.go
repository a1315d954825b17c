package e2e

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// sdkClient is the official OpenAI Go SDK pointed at the API.
func sdkClient(base, key string) openaisdk.Client {
	return openaisdk.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

// TestOpenAIClient: the official OpenAI SDK talks to serve's API: a
// completion, a streamed one whose tool progress it skips, a session
// continued by its header, and a wrong key refused with 401.
func TestOpenAIClient(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.TextStep("The answer is 42."),
		fakellm.ToolStep(fakellm.ToolCall{ID: "t1", Name: "terminal", Arguments: `{"command":"echo streamed-tool"}`}),
		fakellm.TextStep("Streamed reply after the tool."),
		fakellm.TextStep("You asked about 42 before."),
		fakellm.TextStep("Your name is Ada."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	_, base := u.apiServe()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := sdkClient(base, testAPIKey)

	// Non-streaming: the final text, usage, the session in a header.
	var resp *http.Response
	c, err := client.Chat.Completions.New(ctx, openaisdk.ChatCompletionNewParams{
		Model:    "talaria",
		Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage("What is the answer?")},
	}, option.WithResponseInto(&resp))
	if err != nil {
		t.Fatalf("completion: %v", err)
	}
	if len(c.Choices) != 1 || c.Choices[0].Message.Content != "The answer is 42." || c.Choices[0].FinishReason != "stop" {
		t.Fatalf("completion = %+v", c.Choices)
	}
	if c.Usage.TotalTokens <= 0 || c.Object != "chat.completion" {
		t.Errorf("usage %+v, object %q", c.Usage, c.Object)
	}
	session := resp.Header.Get("X-Talaria-Session-Id")
	if session == "" {
		t.Fatal("no X-Talaria-Session-Id on the answer")
	}

	// Streaming, in the same session (the Hermes header name): deltas
	// make the reply; the talaria.tool events are skipped by the SDK.
	stream := client.Chat.Completions.NewStreaming(ctx, openaisdk.ChatCompletionNewParams{
		Model:         "talaria",
		Messages:      []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage("Run a tool, then answer.")},
		StreamOptions: openaisdk.ChatCompletionStreamOptionsParam{IncludeUsage: openaisdk.Bool(true)},
	}, option.WithHeader("X-Hermes-Session-Id", session))
	acc := openaisdk.ChatCompletionAccumulator{}
	chunks, finish := 0, ""
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		if len(ch.Choices) > 0 {
			chunks++
			if ch.Choices[0].FinishReason != "" {
				finish = ch.Choices[0].FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if got := acc.Choices[0].Message.Content; got != "Streamed reply after the tool." || finish != "stop" || chunks < 3 {
		t.Fatalf("streamed content %q, finish %q, %d chunks", got, finish, chunks)
	}
	if acc.Usage.TotalTokens <= 0 {
		t.Errorf("streamed usage %+v", acc.Usage)
	}

	// The session goes on: the model's next request holds the earlier turns.
	_, err = client.Chat.Completions.New(ctx, openaisdk.ChatCompletionNewParams{
		Model:    "talaria",
		Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage("What did I ask first?")},
	}, option.WithHeader("X-Talaria-Session-Id", session))
	if err != nil {
		t.Fatalf("third completion: %v", err)
	}
	reqs := model.Requests()
	last := reqs[len(reqs)-1].Body.Messages
	var history []string
	for _, m := range last {
		history = append(history, m.Content)
	}
	joined := strings.Join(history, "\n")
	for _, want := range []string{"What is the answer?", "The answer is 42.", "Run a tool, then answer.", "streamed-tool", "What did I ask first?"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the third turn's model request lacks %q:\n%s", want, joined)
		}
	}

	// A wrong key: 401, as the SDK reports it.
	stranger := sdkClient(base, "wrong-key-wrong-key-wrong")
	_, err = stranger.Chat.Completions.New(ctx, openaisdk.ChatCompletionNewParams{
		Model: "talaria", Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage("hi")},
	})
	var apiErr *openaisdk.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong key: %v, want a 401", err)
	}
	// A client that keeps the conversation itself sends it whole and no
	// header: a new session starts with the earlier messages, and the
	// system message is the turn's instructions.
	var fresh *http.Response
	c, err = client.Chat.Completions.New(ctx, openaisdk.ChatCompletionNewParams{
		Model: "talaria",
		Messages: []openaisdk.ChatCompletionMessageParamUnion{
			openaisdk.SystemMessage("You are a helpful assistant."),
			openaisdk.UserMessage("My name is Ada."), openaisdk.AssistantMessage("Hello Ada."),
			openaisdk.UserMessage("What is my name?"),
		},
	}, option.WithResponseInto(&fresh))
	if err != nil || c.Choices[0].Message.Content != "Your name is Ada." {
		t.Fatalf("stateless completion: %v %+v", err, c)
	}
	if s := fresh.Header.Get("X-Talaria-Session-Id"); s == "" || s == session {
		t.Errorf("stateless completion ran in session %q (the first was %q)", s, session)
	}
	reqs = model.Requests()
	var roles []string
	for _, m := range reqs[len(reqs)-1].Body.Messages {
		if m.Role != "system" {
			roles = append(roles, m.Role+": "+m.Content)
		}
	}
	// Its system message goes before the question, marked as what it is.
	want := "user: My name is Ada. | assistant: Hello Ada. | user: [System message sent with this request]\n" +
		"You are a helpful assistant.\n[End of the system message]\n\nWhat is my name?"
	if got := strings.Join(roles, " | "); got != want {
		t.Errorf("the stateless turn's model request: %q, want %q", got, want)
	}

	// Models: talaria first.
	page, err := client.Models.List(ctx)
	if err != nil || len(page.Data) == 0 || page.Data[0].ID != "talaria" {
		t.Fatalf("models: %+v %v", page, err)
	}
}
