package llm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// bodyTransport answers every request with one canned response.
type bodyTransport struct {
	status      int
	contentType string
	body        []byte
}

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: b.status, Header: http.Header{"Content-Type": {b.contentType}},
		Body: io.NopCloser(bytes.NewReader(b.body)), Request: r,
	}, nil
}

var knownClasses = map[turnapi.ErrorClass]bool{
	turnapi.ClassRateLimit: true, turnapi.ClassOverloaded: true, turnapi.ClassServer: true, turnapi.ClassTimeout: true, turnapi.ClassNetwork: true,
	turnapi.ClassAuth: true, turnapi.ClassBilling: true, turnapi.ClassContextOverflow: true, turnapi.ClassModelNotFound: true,
	turnapi.ClassBadRequest: true, turnapi.ClassCancelled: true, turnapi.ClassTruncatedReply: true, turnapi.ClassInvalidResponse: true,
}

// FuzzCallAnswers: whatever a provider answers, Call does not panic; a
// failure has a known class and a message that is one printable line of
// bounded size; a success is a reply the protocol finished.
func FuzzCallAnswers(f *testing.F) {
	chunk := `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}` + "\n\n"
	finish := `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	for _, seed := range []struct {
		body   string
		stream bool
		status uint16
	}{
		{chunk + finish + "data: [DONE]\n\n", true, 200},
		{chunk, true, 200},
		{chunk + "data: [DONE]\n\n", true, 200},
		{`data: {"error":{"message":"upstream failed","code":502}}` + "\n\n", true, 200},
		{"<!DOCTYPE html><html>\x00\x1b</html>", true, 200},
		{`{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`, false, 200},
		{`{"choices":[]}`, false, 200},
		{`{"error":{"message":"bad","type":"invalid_request_error"}}`, false, 400},
		{"\xff\xfe garbage", false, 200},
		{"", false, 200},
		{"", true, 502},
	} {
		f.Add([]byte(seed.body), seed.stream, seed.status)
	}
	f.Fuzz(func(t *testing.T, body []byte, stream bool, status uint16) {
		code := 200 + int(status)%400 // 200..599
		ct := "application/json"
		if stream {
			ct = "text/event-stream"
		}
		r, err := Call(context.Background(), Endpoint{BaseURL: "http://fake.invalid/v1", Model: "m"}, request(),
			Options{Stream: stream, Transport: bodyTransport{status: code, contentType: ct, body: body}})
		if err == nil {
			if code >= 400 {
				t.Fatalf("status %d answered without an error: %+v", code, r)
			}
			if stream && r.FinishReason == "" && !strings.Contains(string(body), "[DONE]") {
				t.Fatalf("a stream without finish reason or [DONE] was taken as a reply: %+v", r)
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error %v is not *Error", err)
		}
		if !knownClasses[e.Class] {
			t.Fatalf("unknown class %q", e.Class)
		}
		msg := e.Error()
		if len(msg) > 1200 || !utf8.ValidString(msg) {
			t.Fatalf("message of %d bytes, valid UTF-8 %v", len(msg), utf8.ValidString(msg))
		}
		for _, c := range msg {
			if unicode.IsControl(c) {
				t.Fatalf("control character %U in %q", c, msg)
			}
		}
	})
}

// FuzzOllamaAnswers: whatever an Ollama endpoint answers, Call does not
// panic; a failure has a known class and one printable line of bounded
// size; a success is an answer that reached its done line.
func FuzzOllamaAnswers(f *testing.F) {
	line := `{"model":"m","created_at":"t","message":{"role":"assistant","content":"hi"},"done":false}` + "\n"
	done := `{"model":"m","created_at":"t","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}` + "\n"
	for _, seed := range []struct {
		body   string
		status uint16
	}{
		{line + done, 200},
		{line, 200},
		{`{"model":"m","message":{"tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]},"done":true}`, 200},
		{`{"error":"model 'x' not found"}`, 404},
		{line + `{"error":"runner failed"}`, 200},
		{"<!DOCTYPE html><html>\x00\x1b</html>", 200},
		{"\xff\xfe garbage", 200},
		{"", 200},
	} {
		f.Add([]byte(seed.body), seed.status)
	}
	f.Fuzz(func(t *testing.T, body []byte, status uint16) {
		code := 200 + int(status)%400
		_, err := Call(context.Background(), Endpoint{Wire: WireOllama, BaseURL: "http://fake.invalid", Model: "m"}, request(),
			Options{Stream: true, Transport: bodyTransport{status: code, contentType: "application/x-ndjson", body: body}})
		if err == nil {
			if code/100 != 2 || !bytes.Contains(body, []byte(`"done"`)) {
				t.Fatalf("status %d answered %q without an error", code, body)
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) || !knownClasses[e.Class] {
			t.Fatalf("error %v (%T)", err, err)
		}
		msg := e.Error()
		if len(msg) > 1200 || !utf8.ValidString(msg) || strings.ContainsFunc(msg, unicode.IsControl) {
			t.Fatalf("message %q", msg)
		}
	})
}
