package fakellm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// callJSON makes a non-streaming request and returns the answer text.
func callJSON(ctx context.Context, c *openai.Client) (string, error) {
	resp, err := c.CreateChatCompletion(ctx, chatRequest("hi"))
	if err != nil {
		return "", err
	}
	return resp.Choices[0].Message.Content, nil
}

// callStream makes a streaming request and returns the reassembled text.
func callStream(ctx context.Context, c *openai.Client) (string, error) {
	stream, err := c.CreateChatCompletionStream(ctx, chatRequest("hi"))
	if err != nil {
		return "", err
	}
	defer stream.Close()
	res, err := collectStream(stream)
	return res.text, err
}

func TestClientCancel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		step fakellm.Step
		call func(context.Context, *openai.Client) (string, error)
	}{
		{"hang json", fakellm.Step{Hang: true}, callJSON},
		{"hang stream", fakellm.Step{Hang: true}, callStream},
		{"long delay", fakellm.Step{Text: "late", Delay: time.Hour}, callJSON},
		{"slow chunks", fakellm.Step{Text: "a b c d", ChunkDelay: time.Hour}, callStream},
		{"stalled stream", fakellm.Step{Text: "a b c d", StallAfterChunks: 2}, callStream},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, tc.step)
			c := newClient(t, s, "k")
			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				_, err := tc.call(ctx, c)
				errc <- err
			}()
			if err := s.WaitRequests(testCtx(t), 1); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-errc:
				t.Fatalf("call returned before cancel: %v", err)
			case <-time.After(50 * time.Millisecond): // room for an early return to show
			}
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("call error %v, want context.Canceled", err)
			}
			if err := s.WaitFinished(testCtx(t), 1); err != nil {
				t.Fatal(err)
			}
			if r := s.Requests()[0]; !r.Cancelled || r.Broken {
				t.Errorf("record %s, want Cancelled", flags(r))
			}
		})
	}
}

func TestCloseReleasesHangingRequest(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		t.Run("stream="+strconv.FormatBool(stream), func(t *testing.T) {
			t.Parallel()
			s := startServer(t, fakellm.Step{Hang: true})
			c := newClient(t, s, "k")
			call := callJSON
			if stream {
				call = callStream
			}
			errc := make(chan error, 1)
			go func() {
				_, err := call(testCtx(t), c)
				errc <- err
			}()
			if err := s.WaitRequests(testCtx(t), 1); err != nil {
				t.Fatal(err)
			}
			s.Close()
			if err := <-errc; err == nil {
				t.Error("hanging call succeeded after Close")
			}
			if r := s.Requests()[0]; r.Cancelled || r.Finished.IsZero() {
				t.Errorf("record %s: want finished, not cancelled", flags(r))
			}
			if err := s.WaitRequests(testCtx(t), 2); !errors.Is(err, fakellm.ErrClosed) {
				t.Errorf("WaitRequests after Close: %v, want ErrClosed", err)
			}
		})
	}
}

func TestBreakAfterChunks(t *testing.T) {
	t.Parallel()
	s := startServer(t,
		fakellm.Step{Text: "one two three four five six", BreakAfterChunks: 2},
		fakellm.Step{Text: "one two", BreakAfterChunks: 5},
		fakellm.Step{Text: "whole answer", BreakAfterChunks: 1},
	)
	c := newClient(t, s, "k")
	ctx := testCtx(t)

	text, err := callStream(ctx, c)
	if err == nil || errors.Is(err, io.EOF) {
		t.Errorf("broken stream ended with %v, want an error", err)
	}
	if text != "one two" {
		t.Errorf("content before the break %q, want %q", text, "one two")
	}

	// Fewer content chunks than the limit: breaks before the finish chunk.
	text, err = callStream(ctx, c)
	if err == nil || text != "one two" {
		t.Errorf("short broken stream: text %q err %v", text, err)
	}

	if _, err := callJSON(ctx, c); err == nil {
		t.Error("truncated JSON answer decoded without error")
	}

	if err := s.WaitFinished(ctx, 3); err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Requests() {
		if !r.Broken || r.Cancelled {
			t.Errorf("record %s, want Broken", flags(r))
		}
	}
}

func TestChunkDelay(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.Step{Text: "a b c d", ChunkDelay: 20 * time.Millisecond})
	c := newClient(t, s, "k")
	start := time.Now()
	text, err := callStream(testCtx(t), c)
	if err != nil || text != "a b c d" {
		t.Fatalf("text %q err %v", text, err)
	}
	// Role chunk, four words, finish chunk and [DONE]: six pauses.
	// wallclock: a lower bound: the server sleeps each pause; load only lengthens the stream
	if d := time.Since(start); d < 6*20*time.Millisecond {
		t.Errorf("stream took %v, want at least %v", d, 6*20*time.Millisecond)
	}
}

func TestResponder(t *testing.T) {
	t.Parallel()
	// An agent loop: the scripted first step greets, then the responder
	// calls a tool for every user message and answers every tool result.
	s := startServer(t, fakellm.TextStep("hello"), fakellm.WithResponder(func(r fakellm.Request) fakellm.Step {
		last, _ := r.LastMessage()
		if last.Role == openai.ChatMessageRoleTool {
			return fakellm.TextStep("tool said " + last.Content)
		}
		return fakellm.ToolStep(fakellm.ToolCall{Name: "echo", Arguments: fmt.Sprintf(`{"n":%d}`, r.Index)})
	}))
	c := newClient(t, s, "k")
	ctx := testCtx(t)

	if text, err := callJSON(ctx, c); err != nil || text != "hello" {
		t.Fatalf("scripted: %q %v", text, err)
	}
	req := chatRequest("run it")
	resp, err := c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatalf("responder tool call: %v", err)
	}
	msg := resp.Choices[0].Message
	if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Arguments != `{"n":1}` {
		t.Fatalf("tool calls %+v", msg.ToolCalls)
	}
	req.Messages = append(req.Messages, msg, openai.ChatCompletionMessage{
		Role: openai.ChatMessageRoleTool, ToolCallID: msg.ToolCalls[0].ID, Content: "pong",
	})
	stream, err := c.CreateChatCompletionStream(ctx, req)
	if err != nil {
		t.Fatalf("responder answer: %v", err)
	}
	defer stream.Close()
	res, err := collectStream(stream)
	if err != nil || res.text != "tool said pong" {
		t.Fatalf("answer %q %v", res.text, err)
	}
	got := s.Requests()
	if !got[0].Scripted || got[1].Scripted || got[2].Scripted || got[2].Exhausted {
		t.Errorf("records %s", allFlags(got))
	}
	s.SetResponder(nil)
	if _, err := callJSON(ctx, c); err == nil {
		t.Error("no error after removing the responder")
	}
}

func TestConcurrentRequests(t *testing.T) {
	t.Parallel()
	const n = 8
	tests := []struct {
		name  string
		setup func(s *fakellm.Server)
		want  []string
	}{
		{
			name: "script",
			setup: func(s *fakellm.Server) {
				for i := range n {
					s.Push(fakellm.Step{Text: "step " + strconv.Itoa(i), Delay: 10 * time.Millisecond})
				}
			},
		},
		{
			// Every answer waits until all n requests are in: this only
			// finishes if the server serves them at the same time.
			name: "responder waiting for all",
			setup: func(s *fakellm.Server) {
				s.SetResponder(func(r fakellm.Request) fakellm.Step {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					if err := s.WaitRequests(ctx, n); err != nil {
						return fakellm.ErrorStep(500, err.Error())
					}
					return fakellm.TextStep("step " + strconv.Itoa(r.Index))
				})
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t)
			tc.setup(s)
			c := newClient(t, s, "k")
			ctx := testCtx(t)
			var (
				mu      sync.Mutex
				answers []string
				wg      sync.WaitGroup
			)
			for i := range n {
				wg.Go(func() {
					call := callJSON
					if i%2 == 1 {
						call = callStream
					}
					text, err := call(ctx, c)
					if err != nil {
						t.Errorf("request: %v", err)
						return
					}
					mu.Lock()
					answers = append(answers, text)
					mu.Unlock()
				})
			}
			wg.Wait()
			slices.Sort(answers)
			var want []string
			for i := range n {
				want = append(want, "step "+strconv.Itoa(i))
			}
			if !slices.Equal(answers, want) {
				t.Errorf("answers %q, want %q", answers, want)
			}
			for i, r := range s.Requests() {
				if r.Index != i {
					t.Errorf("record %d has index %d", i, r.Index)
				}
			}
		})
	}
}

func TestModels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts []fakellm.Option
		want []string
	}{
		{"default", nil, []string{"fake-model"}},
		{"configured", []fakellm.Option{fakellm.WithModels("big", "small")}, []string{"big", "small"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, append(tc.opts, fakellm.TextStep("x"))...)
			c := newClient(t, s, "k")
			ctx := testCtx(t)
			list, err := c.ListModels(ctx)
			if err != nil {
				t.Fatalf("ListModels: %v", err)
			}
			var ids []string
			for _, m := range list.Models {
				ids = append(ids, m.ID)
				if m.Object != "model" {
					t.Errorf("model %q object %q", m.ID, m.Object)
				}
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("models %q, want %q", ids, tc.want)
			}
			last := tc.want[len(tc.want)-1]
			if m, err := c.GetModel(ctx, last); err != nil || m.ID != last {
				t.Errorf("GetModel(%q): %+v %v", last, m, err)
			}
			// A request naming no model is answered as the first model.
			resp, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
				Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
			})
			if err != nil || resp.Model != tc.want[0] {
				t.Errorf("answer model %q (%v), want %q", resp.Model, err, tc.want[0])
			}
		})
	}
}

func TestWaitRequestsContext(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx, cancel := context.WithTimeout(testCtx(t), 30*time.Millisecond)
	defer cancel()
	if err := s.WaitRequests(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitRequests: %v, want DeadlineExceeded", err)
	}
	if err := s.WaitRequests(ctx, 0); err != nil {
		t.Errorf("WaitRequests(0): %v", err)
	}
}

// TestStreamWireFormat checks the raw Server-Sent Events a streaming client
// receives.
func TestStreamWireFormat(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.Step{Text: "hi there", ToolCalls: []fakellm.ToolCall{{Name: "f", Arguments: `{"a":1}`}}})
	body := `{"model":"fake-model","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, s.URL()+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(raw), "\n\ndata: [DONE]\n\n") {
		t.Errorf("stream does not end with [DONE]: %q", raw)
	}
	events := strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n")
	for i, ev := range events[:len(events)-1] {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			t.Fatalf("event %d lacks the data prefix: %q", i, ev)
		}
		var chunk map[string]json.RawMessage
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("event %d is not JSON: %v", i, err)
		}
		if string(chunk["object"]) != `"chat.completion.chunk"` {
			t.Errorf("event %d object %s", i, chunk["object"])
		}
		last := i == len(events)-2
		if last != (string(chunk["choices"]) == "[]") {
			t.Errorf("event %d choices %s", i, chunk["choices"])
		}
		if last != (string(chunk["usage"]) != "null") {
			t.Errorf("event %d usage %s", i, chunk["usage"])
		}
	}
	if !strings.Contains(string(raw), `"tool_calls":[{"index":0,"id":"call_`) ||
		!strings.Contains(string(raw), `"type":"function","function":{"name":"f","arguments":""}}]`) {
		t.Errorf("tool call head delta not found in %s", raw)
	}
	if !strings.Contains(string(raw), `"finish_reason":"tool_calls"`) || !strings.Contains(string(raw), `"finish_reason":null`) {
		t.Errorf("finish reasons not found in %s", raw)
	}
}
