package e2e

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// cutFirstModel answers a conversation's first request for each user text
// with a stream cut after a few chunks (the text begun by first(text)),
// and every later request with then(text) in full; a request without
// tools (a session's title) gets a short title.
func cutFirstModel(first, then func(string) string) *fakellm.Server {
	var mu sync.Mutex
	seen := map[string]int{}
	return fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		if len(req.Body.Tools) == 0 {
			return fakellm.TextStep("Retried call")
		}
		text := lastUser(req)
		mu.Lock()
		seen[text]++
		n := seen[text]
		mu.Unlock()
		if n == 1 {
			return fakellm.Step{Text: first(text), ChunkSize: 8, ChunkDelay: 30 * time.Millisecond, BreakAfterChunks: 4}
		}
		return fakellm.Step{Text: then(text), ChunkSize: 8, ChunkDelay: 10 * time.Millisecond}
	}))
}

// sameAnswer is the answer of the retried-call tests whose retry answers
// as the cut attempt began.
func sameAnswer(text string) string {
	return "The answer to " + text + " comes once, whole, in order."
}

// streamSDK sends text as a streaming completion through the official
// OpenAI SDK and returns the content it assembled, the run's id and the
// stream's error.
func streamSDK(t *testing.T, base, text string) (string, string, error) {
	t.Helper()
	// A guard against a hang, not a bound on speed: on an oversubscribed
	// machine (TestScaleStreamsExactUnderLoad with make test beside it) a few of
	// 100 streams take more than two minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var resp *http.Response
	client := sdkClient(base, testAPIKey)
	stream := client.Chat.Completions.NewStreaming(ctx, openaisdk.ChatCompletionNewParams{
		Model: "talaria", Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage(text)},
	}, option.WithResponseInto(&resp))
	var b strings.Builder
	for stream.Next() {
		for _, c := range stream.Current().Choices {
			b.WriteString(c.Delta.Content)
		}
	}
	runID := ""
	if resp != nil {
		runID = resp.Header.Get("X-Talaria-Run-Id")
	}
	return b.String(), runID, stream.Err()
}

// finalText waits for a run to end and returns its stored answer.
func finalText(t *testing.T, base, runID string) string {
	t.Helper()
	r := waitRun(t, base, runID, time.Minute, func(r runInfo) bool { return r.FinalText != nil })
	return *r.FinalText
}

// TestRetriedCallShownOnce: a model call whose stream is cut after a few
// chunks is tried again and answers the same: the official OpenAI SDK's
// stream carries the answer once (it goes on from what it had sent), the
// run's /v1/runs events folded as docs/api.md says are the answer once,
// and the web page (Chromium) shows the answer once.
func TestRetriedCallShownOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a browser")
	}
	t.Parallel()
	model := cutFirstModel(sameAnswer, sameAnswer)
	defer model.Close()
	u := newUser(t, model.URL())
	_, base := u.apiServe()

	const asked = "the SDK's question"
	got, runID, err := streamSDK(t, base, asked)
	if err != nil || got != sameAnswer(asked) {
		t.Fatalf("the SDK's stream: %q (%v), want %q", got, err, sameAnswer(asked))
	}
	if stored := finalText(t, base, runID); stored != sameAnswer(asked) {
		t.Errorf("stored answer %q", stored)
	}
	if folded := foldedEvents(t, base, runID); folded != sameAnswer(asked) {
		t.Errorf("the run's events show %q, want %q", folded, sameAnswer(asked))
	}
	if n := len(model.Requests()); n < 2 {
		t.Fatalf("the model was asked %d times: the cut stream was not tried again", n)
	}

	b := newBrowser(t)
	defer func() {
		if t.Failed() {
			b.screenshot("retried-call-failed.png")
		}
	}()
	b.do(30*time.Second, chromedp.Navigate(base+"/#key="+testAPIKey), chromedp.WaitVisible(chromedp.ID("input")))
	const typed = "the page's question"
	send(b, typed)
	b.waitFor("the end of the turn", `document.getElementById("status").textContent === "Done"`, 90*time.Second)
	shown := eval[string](b, `[...[...document.querySelectorAll(".msg.assistant")].pop().querySelectorAll(".md")].map(e => e.textContent).join("")`)
	if strings.TrimSpace(shown) != sameAnswer(typed) {
		t.Errorf("the page shows %q, want %q", shown, sameAnswer(typed))
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("the page's console reported:\n%s", strings.Join(p, "\n"))
	}
}

// TestRetriedCallAnsweredDifferently: a cut model call whose retry answers
// differently: the OpenAI SDK's stream, which cannot take back what it
// sent, ends with the documented retried_differently error after a part
// of the first attempt's text (none of the second's), and the run's
// answer is the retry's, readable at GET /v1/runs/{id}.
func TestRetriedCallAnsweredDifferently(t *testing.T) {
	t.Parallel()
	first := func(text string) string { return "A first thought about " + text + " that was cut short." }
	then := func(text string) string { return "Quite another answer to " + text + "." }
	model := cutFirstModel(first, then)
	defer model.Close()
	u := newUser(t, model.URL())
	_, base := u.apiServe()

	const asked = "the changing question"
	got, runID, err := streamSDK(t, base, asked)
	if err == nil || !strings.Contains(err.Error(), "retried_differently") || !strings.Contains(err.Error(), runID) {
		t.Fatalf("the SDK's stream ended with %v after %q, want the retried_differently error naming run %s", err, got, runID)
	}
	if got == "" || !strings.HasPrefix(first(asked), got) {
		t.Errorf("before the error the stream carried %q, want a beginning of %q", got, first(asked))
	}
	if stored := finalText(t, base, runID); stored != then(asked) {
		t.Errorf("the run's answer %q, want %q", stored, then(asked))
	}
	if folded := foldedEvents(t, base, runID); folded != then(asked) {
		t.Errorf("the run's events show %q, want %q", folded, then(asked))
	}
}
