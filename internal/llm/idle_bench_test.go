package llm

import (
	"context"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// BenchmarkIdleTimeout measures a call to a model that stops answering,
// for each wire, with an idle timeout of 200 ms: about the timeout itself
// when the timeout is what ends the call.
func BenchmarkIdleTimeout(b *testing.B) {
	for _, bc := range []struct {
		name   string
		wire   Wire
		stream bool
		step   fakellm.Step
	}{
		{"openai-json", WireOpenAI, false, fakellm.Step{Hang: true}},
		{"openai-stream", WireOpenAI, true, fakellm.Step{Text: "one two three", StallAfterChunks: 2}},
		{"anthropic-json", WireAnthropic, false, fakellm.Step{Hang: true}},
		{"anthropic-stream", WireAnthropic, true, fakellm.Step{Text: "one two three", StallAfterChunks: 2}},
		{"ollama-stream", WireOllama, true, fakellm.Step{Text: "one two three", StallAfterChunks: 1}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := fakellm.New(fakellm.WithResponder(func(fakellm.Request) fakellm.Step { return bc.step }))
			b.Cleanup(srv.Close)
			e := Endpoint{Wire: bc.wire, BaseURL: srv.URL(), Model: "m"}
			for b.Loop() {
				ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
				_, err := Call(ctx, e, request(), Options{Stream: bc.stream, IdleTimeout: 200 * time.Millisecond})
				cancel()
				if err == nil {
					b.Fatal("the call to a silent model succeeded")
				}
			}
		})
	}
}
