package fakellm_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// newResponses is an openai-go Responses service for the server, with
// its own transport, closed when the test ends.
func newResponses(t *testing.T, s *fakellm.Server, key string) *responses.ResponseService {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	svc := responses.NewResponseService(option.WithBaseURL(s.URL()), option.WithAPIKey(key),
		option.WithMaxRetries(0), option.WithHTTPClient(&http.Client{Transport: tr}))
	return &svc
}

// responsesParams asks for a stateless response with encrypted reasoning.
func responsesParams(text string) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:   "fake-model",
		Store:   param.NewOpt(false),
		Include: []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
		Input:   responses.ResponseNewParamsInputUnion{OfString: param.NewOpt(text)},
	}
}

// responsesAnswer is what a response (or a stream of events) said, as the SDK
// read it.
type responsesAnswer struct {
	status, incomplete string
	text, reasoning    string
	types              []string // output item types in order
	calls              []string // "call_id name arguments"
	encrypted          bool
	usage              responses.ResponseUsage
}

// readResponsesAnswer summarises a response object.
func readResponsesAnswer(r *responses.Response) responsesAnswer {
	a := responsesAnswer{status: string(r.Status), incomplete: r.IncompleteDetails.Reason, text: r.OutputText(), usage: r.Usage}
	for _, it := range r.Output {
		a.types = append(a.types, it.Type)
		switch it.Type {
		case "reasoning":
			for _, s := range it.Summary {
				a.reasoning += s.Text
			}
			a.encrypted = it.EncryptedContent != ""
		case "function_call":
			a.calls = append(a.calls, it.CallID+" "+it.Name+" "+it.Arguments.OfString)
		}
	}
	return a
}

var responsesSDKCases = []struct {
	name string
	step fakellm.Step
	want responsesAnswer
}{
	{"text", fakellm.TextStep("Hello there, world."),
		responsesAnswer{status: "completed", text: "Hello there, world.", types: []string{"message"}}},
	{"reasoning and calls", fakellm.Step{Reasoning: "Think first.", Text: "Looking.", ToolCalls: []fakellm.ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: `{"path":"größe.txt"}`}, {ID: "call_b", Name: "list_dir"}}},
		responsesAnswer{status: "completed", text: "Looking.", reasoning: "Think first.", encrypted: true,
			types: []string{"reasoning", "message", "function_call", "function_call"},
			calls: []string{`call_a read_file {"path":"größe.txt"}`, "call_b list_dir {}"}}},
	{"length", fakellm.Step{Text: "cut", FinishReason: "length"},
		responsesAnswer{status: "incomplete", incomplete: "max_output_tokens", text: "cut", types: []string{"message"}}},
	{"content filter", fakellm.Step{FinishReason: "content_filter"},
		responsesAnswer{status: "incomplete", incomplete: "content_filter", types: []string{"message"}}},
	{"usage", fakellm.Step{Text: "ok", Usage: &openai.Usage{PromptTokens: 50, CompletionTokens: 7,
		PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 40}}},
		responsesAnswer{status: "completed", text: "ok", types: []string{"message"},
			usage: responses.ResponseUsage{InputTokens: 50, OutputTokens: 7, TotalTokens: 57,
				InputTokensDetails: responses.ResponseUsageInputTokensDetails{CachedTokens: 40}}}},
}

// checkResponsesAnswer compares what the SDK read with the case's expectation.
func checkResponsesAnswer(t *testing.T, got, want responsesAnswer) {
	t.Helper()
	if got.status != want.status || got.incomplete != want.incomplete || got.text != want.text ||
		got.reasoning != want.reasoning || got.encrypted != want.encrypted {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if strings.Join(got.types, ",") != strings.Join(want.types, ",") || strings.Join(got.calls, ";") != strings.Join(want.calls, ";") {
		t.Errorf("items %v calls %v, want %v %v", got.types, got.calls, want.types, want.calls)
	}
	if want.usage.TotalTokens > 0 {
		u, w := got.usage, want.usage
		if u.InputTokens != w.InputTokens || u.OutputTokens != w.OutputTokens || u.TotalTokens != w.TotalTokens ||
			u.InputTokensDetails.CachedTokens != w.InputTokensDetails.CachedTokens {
			t.Errorf("usage %+v, want %+v", u, w)
		}
	} else if got.usage.InputTokens <= 0 || got.usage.TotalTokens != got.usage.InputTokens+got.usage.OutputTokens {
		t.Errorf("implausible usage %+v", got.usage)
	}
}

func TestResponsesSDK(t *testing.T) {
	t.Parallel()
	for _, tc := range responsesSDKCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, tc.step)
			resp, err := newResponses(t, s, "k").New(testCtx(t), responsesParams("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(resp.ID, "resp_") || resp.Object != "response" || resp.Model != "fake-model" {
				t.Errorf("envelope: id %q object %q model %q", resp.ID, resp.Object, resp.Model)
			}
			checkResponsesAnswer(t, readResponsesAnswer(resp), tc.want)
		})
	}
}

func TestResponsesSDKStream(t *testing.T) {
	t.Parallel()
	for _, tc := range responsesSDKCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, tc.step)
			stream := newResponses(t, s, "k").NewStreaming(testCtx(t), responsesParams("hi"))
			defer stream.Close()
			var (
				types               []string
				text, reasoning     strings.Builder
				args                = map[int64]string{}
				pieces              = map[int64]int{}
				final               *responses.Response
				seq                 int64
				done, added, deltas int
			)
			for stream.Next() {
				ev := stream.Current()
				if ev.SequenceNumber != seq {
					t.Errorf("event %s has sequence number %d, want %d", ev.Type, ev.SequenceNumber, seq)
				}
				seq++
				types = append(types, ev.Type)
				switch ev.Type {
				case "response.output_text.delta":
					text.WriteString(ev.Delta)
					deltas++
				case "response.reasoning_summary_text.delta":
					reasoning.WriteString(ev.Delta)
				case "response.function_call_arguments.delta":
					args[ev.OutputIndex] += ev.Delta
					pieces[ev.OutputIndex]++
				case "response.function_call_arguments.done":
					if args[ev.OutputIndex] != ev.Arguments {
						t.Errorf("arguments %q streamed as %q", ev.Arguments, args[ev.OutputIndex])
					}
				case "response.output_item.added":
					added++
				case "response.output_item.done":
					done++
				case "response.completed", "response.incomplete":
					resp := ev.Response
					final = &resp
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if len(types) < 3 || types[0] != "response.created" || types[1] != "response.in_progress" || final == nil ||
				types[len(types)-1] != "response."+tc.want.status {
				t.Fatalf("events %v", types)
			}
			got := readResponsesAnswer(final)
			checkResponsesAnswer(t, got, tc.want)
			if text.String() != tc.want.text || reasoning.String() != tc.want.reasoning {
				t.Errorf("streamed text %q reasoning %q", text.String(), reasoning.String())
			}
			if added != len(tc.want.types) || done != added {
				t.Errorf("%d items added, %d done, want %d", added, done, len(tc.want.types))
			}
			if strings.Count(tc.want.text, " ") > 0 && deltas < 2 {
				t.Errorf("text came in %d deltas, want several", deltas)
			}
			for i, n := range pieces {
				if n < 2 && len(args[i]) > 2 {
					t.Errorf("arguments of item %d came in %d pieces", i, n)
				}
			}
		})
	}
}

func TestResponsesSDKErrors(t *testing.T) {
	t.Parallel()
	s := startServer(t, fakellm.WithAPIKey("right"),
		fakellm.Step{Status: 429, ErrorMessage: "slow down", RetryAfter: "5"})
	_, err := newResponses(t, s, "wrong").New(testCtx(t), responsesParams("hi"))
	var apiErr *responses.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
		t.Fatalf("wrong key: %v", err)
	}
	_, err = newResponses(t, s, "right").New(testCtx(t), responsesParams("hi"))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Message != "slow down" ||
		apiErr.Response.Header.Get("Retry-After") != "5" {
		t.Fatalf("rate limit: %v", err)
	}
	bad := responsesParams("hi")
	bad.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfFunctionCallOutput("orphan"),
	}}
	bad.Input.OfInputItemList[0].OfFunctionCallOutput.CallID = param.NewOpt("call_orphan")
	_, err = newResponses(t, s, "right").New(testCtx(t), bad)
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Type != "invalid_request_error" ||
		!strings.Contains(apiErr.Message, "No tool call found for function call output with call_id call_orphan") {
		t.Fatalf("orphan output: %v", err)
	}
}
