package llm

import (
	"context"
	"errors"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

func request() Request {
	return Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
}

func TestCallTextAndTools(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "json", true: "stream"}[stream]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(
				fakellm.Step{Text: "hello there", Reasoning: "thinking it over"},
				fakellm.ToolStep(
					fakellm.ToolCall{ID: "a", Name: "read_file", Arguments: `{"path":"x.txt","limit":10}`},
					fakellm.ToolCall{ID: "b", Name: "terminal", Arguments: `{"command":"echo hi"}`},
				),
			)
			defer srv.Close()
			p := Endpoint{BaseURL: srv.URL(), APIKey: "k", Model: "fake-model"}
			var deltas string
			opts := Options{Stream: stream, OnDelta: func(s string) { deltas += s }}

			r, err := Call(context.Background(), p, request(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if r.Content != "hello there" || r.Reasoning != "thinking it over" || r.FinishReason != "stop" {
				t.Fatalf("reply = %+v", r)
			}
			if r.Usage.PromptTokens+r.Usage.CompletionTokens == 0 {
				t.Fatal("usage missing")
			}
			if stream && deltas != "hello there" {
				t.Fatalf("deltas = %q", deltas)
			}
			r, err = Call(context.Background(), p, request(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.ToolCalls) != 2 || r.FinishReason != "tool_calls" {
				t.Fatalf("reply = %+v", r)
			}
			if r.ToolCalls[0].ID != "a" || r.ToolCalls[0].Function.Arguments != `{"path":"x.txt","limit":10}` ||
				r.ToolCalls[1].Function.Name != "terminal" || r.ToolCalls[1].Function.Arguments != `{"command":"echo hi"}` {
				t.Fatalf("tool calls = %+v", r.ToolCalls)
			}
			reqs := srv.Requests()
			if reqs[0].Body.Stream != stream || reqs[0].Body.Model != "fake-model" {
				t.Fatalf("request stream=%v model=%s", reqs[0].Body.Stream, reqs[0].Body.Model)
			}
		})
	}
}

func TestCallErrors(t *testing.T) {
	t.Parallel()
	srv := fakellm.New(
		fakellm.Step{Status: 429, ErrorMessage: "slow down", RetryAfter: "3"},
		fakellm.Step{Status: 401, ErrorMessage: "bad key"},
		fakellm.Step{Status: 400, ErrorMessage: "maximum context length exceeded"},
		fakellm.Step{Text: "one two three four five", BreakAfterChunks: 2},
	)
	defer srv.Close()
	p := Endpoint{BaseURL: srv.URL(), APIKey: "k", Model: "m"}
	want := []struct {
		class  turnapi.ErrorClass
		status int
		retry  time.Duration
		stream bool
	}{
		{turnapi.ClassRateLimit, 429, 3 * time.Second, false},
		{turnapi.ClassAuth, 401, 0, true},
		{turnapi.ClassContextOverflow, 400, 0, false},
		{turnapi.ClassTruncatedReply, 0, 0, true},
	}
	for i, w := range want {
		_, err := Call(context.Background(), p, request(), Options{Stream: w.stream})
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("call %d: error %v is not *Error", i, err)
		}
		if e.Class != w.class || e.Status != w.status || e.RetryAfter != w.retry {
			t.Fatalf("call %d: got class=%s status=%d retry=%v, want %+v (%v)", i, e.Class, e.Status, e.RetryAfter, w, err)
		}
		if i == 3 && e.Streamed == "" {
			t.Fatalf("broken stream lost the text received so far")
		}
	}
}

func TestCallCancelled(t *testing.T) {
	t.Parallel()
	srv := fakellm.New(fakellm.Step{Hang: true})
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := Call(ctx, Endpoint{BaseURL: srv.URL(), Model: "m"}, request(), Options{Stream: true})
	var e *Error
	if !errors.As(err, &e) || e.Class != turnapi.ClassTimeout {
		t.Fatalf("err = %v", err)
	}
}

func TestPing(t *testing.T) {
	t.Parallel()
	srv := fakellm.New()
	defer srv.Close()
	if err := Ping(context.Background(), Endpoint{BaseURL: srv.URL()}); err != nil {
		t.Fatalf("ping live server: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := Ping(ctx, Endpoint{BaseURL: "http://127.0.0.1:1/v1"}); err == nil {
		t.Fatal("ping of a closed port succeeded")
	}
}
