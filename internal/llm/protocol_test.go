package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TestCallClassifiesAnswers: every shape of answer a provider, a proxy or
// a broken connection can produce maps to one class, with a message that
// shows what came (clipped, printable).
func TestCallClassifiesAnswers(t *testing.T) {
	t.Parallel()
	bigPage := "<!DOCTYPE html><html><body>" + strings.Repeat("<p>oops \x00\x1b[31m</p>\n", 50000) + "</body></html>"
	tests := []struct {
		name   string
		stream bool
		step   fakellm.Step
		class  turnapi.ErrorClass
		status int
		// in must appear in the message; streamed is the text kept.
		in       []string
		streamed string
	}{
		{"html page", false, fakellm.HTMLStep("Service Unavailable"), turnapi.ClassInvalidResponse, 200,
			[]string{"text/html", "it begins: <!DOCTYPE html> <html><head><title>Service Unavailable"}, ""},
		{"html page streamed", true, fakellm.HTMLStep("Service Unavailable"), turnapi.ClassInvalidResponse, 200,
			[]string{"text/html", "<!DOCTYPE html>"}, ""},
		{"huge html page", false, fakellm.Step{Body: bigPage}, turnapi.ClassInvalidResponse, 200,
			[]string{"it begins: <!DOCTYPE html><html><body><p>oops"}, ""},
		{"malformed json", false, fakellm.Step{Body: `{"id": "x", "choices": [`, ContentType: "application/json"},
			turnapi.ClassInvalidResponse, 200, []string{`it begins: {"id": "x", "choices": [`}, ""},
		{"json of the wrong type", false, fakellm.Step{Body: `["a"]`, ContentType: "application/json"},
			turnapi.ClassInvalidResponse, 200, []string{`it begins: ["a"]`}, ""},
		{"json without choices", false, fakellm.Step{Body: `{}`, ContentType: "application/json"},
			turnapi.ClassInvalidResponse, 200, []string{"no choices", "it begins: {}"}, ""},
		{"json cut in half, complete body", false, fakellm.Step{Text: "hello there", EndAfterChunks: 1},
			turnapi.ClassInvalidResponse, 200, []string{"it begins: {"}, ""},
		{"json connection broken", false, fakellm.Step{Text: "hello there", BreakAfterChunks: 1},
			turnapi.ClassNetwork, 0, nil, ""},
		{"sse of garbage", true, fakellm.Step{Body: "data: <html>nope</html>\n\n", ContentType: "text/event-stream"},
			turnapi.ClassInvalidResponse, 200, []string{"it begins: data: <html>nope</html>"}, ""},
		{"plain text stream", true, fakellm.Step{Body: "hello world\n", ContentType: "text/plain"},
			turnapi.ClassInvalidResponse, 200, []string{"without a chunk", "it begins: hello world"}, ""},
		{"empty stream", true, fakellm.Step{Body: "\n", ContentType: "text/event-stream"},
			turnapi.ClassInvalidResponse, 200, []string{"the body was empty"}, ""},
		{"stream ends early", true, fakellm.Step{Text: "partial answer that goes on", EndAfterChunks: 2},
			turnapi.ClassTruncatedReply, 0, []string{"cut off", "without a finish reason"}, "partial answer"},
		{"stream breaks", true, fakellm.Step{Text: "partial answer that goes on", BreakAfterChunks: 2},
			turnapi.ClassTruncatedReply, 0, []string{"cut off", "broke"}, "partial answer"},
		{"stream breaks before the finish", true, fakellm.Step{Text: "whole", BreakAfterChunks: 9},
			turnapi.ClassTruncatedReply, 0, []string{"cut off"}, "whole"},
		{"error page with error status", false, fakellm.Step{Status: 502, Body: bigPage},
			turnapi.ClassServer, 502, []string{"<!DOCTYPE html><html><body><p>oops"}, ""},
		{"huge error message", false, fakellm.Step{Status: 500, ErrorMessage: strings.Repeat("e", 3<<20)},
			turnapi.ClassServer, 500, []string{"eeee…"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(tt.step)
			defer srv.Close()
			p := Endpoint{BaseURL: srv.URL(), APIKey: "k", Model: "m"}
			_, err := Call(context.Background(), p, request(), Options{Stream: tt.stream})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.Class != tt.class || e.Status != tt.status {
				t.Fatalf("class %s status %d, want %s %d: %v", e.Class, e.Status, tt.class, tt.status, e)
			}
			msg := e.Error()
			for _, want := range tt.in {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			if len(msg) > 1000 || strings.ContainsAny(msg, "\x00\x1b\n") {
				t.Errorf("message not clipped to one printable line (%d bytes): %q", len(msg), clipForLog(msg))
			}
			if e.Streamed != tt.streamed {
				t.Errorf("streamed %q, want %q", e.Streamed, tt.streamed)
			}
		})
	}
}

func clipForLog(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// TestStreamEndMarkerWithoutFinishReason: a stream that ends with [DONE]
// but never names a finish reason is complete by the protocol.
func TestStreamEndMarkerWithoutFinishReason(t *testing.T) {
	t.Parallel()
	body := `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}` +
		"\n\ndata: [DONE]\n\n"
	srv := fakellm.New(fakellm.Step{Body: body, ContentType: "text/event-stream"})
	defer srv.Close()
	r, err := Call(context.Background(), Endpoint{BaseURL: srv.URL(), Model: "m"}, request(), Options{Stream: true})
	if err != nil || r.Content != "hi" {
		t.Fatalf("reply %+v, err %v", r, err)
	}
}

// TestStreamFinishedWithoutEndMarker: a stream that named its finish
// reason and then ended without [DONE] lost nothing of the reply.
func TestStreamFinishedWithoutEndMarker(t *testing.T) {
	t.Parallel()
	body := `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}` +
		"\n\n" + `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	srv := fakellm.New(fakellm.Step{Body: body, ContentType: "text/event-stream"})
	defer srv.Close()
	r, err := Call(context.Background(), Endpoint{BaseURL: srv.URL(), Model: "m"}, request(), Options{Stream: true})
	if err != nil || r.Content != "hi" || r.FinishReason != "stop" {
		t.Fatalf("reply %+v, err %v", r, err)
	}
}

// TestIdleTimeout: a call with no progress for the idle timeout ends as a
// timeout; a slow stream whose chunks keep coming lives longer than it.
func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	srv := fakellm.New(
		fakellm.Step{Hang: true},
		fakellm.Step{Text: "one two three four five six", StallAfterChunks: 2},
		fakellm.Step{Text: "one two three four five six", ChunkDelay: 100 * time.Millisecond},
	)
	defer srv.Close()
	p := Endpoint{BaseURL: srv.URL(), Model: "m"}
	opts := Options{IdleTimeout: 400 * time.Millisecond}
	for i, stream := range []bool{false, true} {
		opts.Stream = stream
		_, err := Call(context.Background(), p, request(), opts)
		var e *Error
		if !errors.As(err, &e) || e.Class != turnapi.ClassTimeout || !strings.Contains(e.Message, "no answer from the model for 400ms") {
			t.Fatalf("call %d: %v, want an idle timeout", i, err)
		}
	}
	start := time.Now()
	r, err := Call(context.Background(), p, request(), opts)
	if err != nil || r.Content != "one two three four five six" {
		t.Fatalf("slow stream: %+v %v", r, err)
	}
	// wallclock: a lower bound, the test's premise: the server sleeps between chunks; load only lengthens the stream
	if time.Since(start) < 400*time.Millisecond {
		t.Fatal("the slow stream was not slower than the idle timeout: the test proves nothing")
	}
	// A cancelled call is cancelled, not timed out.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Call(ctx, p, request(), opts)
	var e *Error
	if !errors.As(err, &e) || e.Class != turnapi.ClassCancelled {
		t.Fatalf("cancelled call: %v", err)
	}
}

func TestInvalidResponseAttempts(t *testing.T) {
	t.Parallel()
	for c, want := range map[turnapi.ErrorClass]int{turnapi.ClassInvalidResponse: 3, turnapi.ClassTimeout: 3, turnapi.ClassServer: 0, turnapi.ClassRateLimit: 0, turnapi.ClassNetwork: 0} {
		if got := c.MaxAttempts(); got != want {
			t.Errorf("%s.MaxAttempts() = %d, want %d (0: the caller's policy)", c, got, want)
		}
	}
	for _, c := range []turnapi.ErrorClass{turnapi.ClassInvalidResponse, turnapi.ClassTruncatedReply} {
		if !c.Retryable() {
			t.Errorf("%s is not retryable", c)
		}
	}
}

func TestPrintable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 10, "plain"},
		{"  two\n\n lines\t", 20, "two lines"},
		{"nul\x00byte\x1b[0m", 20, "nul byte [0m"},
		{"bad \xff utf8", 20, "bad \ufffd utf8"},
		{"abcdefghij", 5, "abcde…"},
		{"héllo", 2, "h…"},
		{"a b", 2, "a…"},
		{"", 5, ""},
	}
	for _, tt := range tests {
		if got := printable(tt.in, tt.max); got != tt.want {
			t.Errorf("printable(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestIsDoneLine(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]bool{
		"data: [DONE]": true, "data:[DONE]": true, " data: [DONE] \r": true,
		`data: {"content":"[DONE]"}`: false, "[DONE]": false, "event: done": false, "": false,
	} {
		if got := isDoneLine([]byte(line)); got != want {
			t.Errorf("isDoneLine(%q) = %v", line, got)
		}
	}
}

func TestNotProtocol(t *testing.T) {
	t.Parallel()
	broken := errors.New("connection reset")
	tests := []struct {
		name string
		err  error
		body bodyState
		want bool
	}{
		{"refused page", errNotProtocol, bodyState{}, true},
		{"syntax error, whole body", jsonSyntaxError(), bodyState{EOF: true}, true},
		{"syntax error, connection broke", jsonSyntaxError(), bodyState{Err: broken}, false},
		{"unexpected end, whole body", errUnexpectedEOF(), bodyState{EOF: true}, true},
		{"unexpected end, body cut", errUnexpectedEOF(), bodyState{Err: broken}, false},
		{"other error", broken, bodyState{EOF: true}, false},
	}
	for _, tt := range tests {
		if got := notProtocol(tt.err, tt.body); got != tt.want {
			t.Errorf("%s: notProtocol = %v", tt.name, got)
		}
	}
}

func jsonSyntaxError() error {
	var v any
	return json.Unmarshal([]byte("<html>"), &v)
}

func errUnexpectedEOF() error { return io.ErrUnexpectedEOF }
