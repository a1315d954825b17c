package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// loopRun is one runtime (embedded Temporal, SQLite store, worker) driven by
// a scripted model, for end-to-end tests of the loop's cases.
type loopRun struct {
	t       *testing.T
	rt      *Runtime
	model   *fakellm.Server
	workdir string
}

func newLoopRun(t *testing.T, steps []fakellm.Step, tune ...func(*config.Config, *Options)) *loopRun {
	t.Helper()
	return newWireRun(t, llm.WireOpenAI, steps, tune...)
}

// newWireRun is newLoopRun with the model reached in wire format w.
func newWireRun(t *testing.T, w llm.Wire, steps []fakellm.Step, tune ...func(*config.Config, *Options)) *loopRun {
	t.Helper()
	model := fakellm.New(fakellm.WithSteps(steps...))
	t.Cleanup(model.Close)
	wire := func(c *config.Config, _ *Options) { c.Model.Provider = string(w) }
	l := &loopRun{t: t, rt: startRuntime(t, model, append([]func(*config.Config, *Options){wire}, tune...)...), model: model, workdir: t.TempDir()}
	t.Cleanup(func() {
		for _, r := range model.Requests() {
			if r.Wire != fakellm.Wire(w) {
				t.Errorf("request %d came in wire format %s, want %s", r.Index, r.Wire, w)
			}
		}
	})
	return l
}

// turn runs one turn of session and returns its result.
func (l *loopRun) turn(session, msg string, tune ...func(*workflows.TurnInput)) workflows.ConversationResult {
	l.t.Helper()
	in := workflows.TurnInput{SessionID: session, UserMessage: msg, Model: fakellm.DefaultModel,
		Workdir: l.workdir, ModelAttempts: 2}
	for _, f := range tune {
		f(&in)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := l.rt.RunTurn(ctx, in)
	if err != nil {
		l.t.Fatalf("turn: %v", err)
	}
	return res
}

// transcript is the session's persisted conversation.
func (l *loopRun) transcript(session string) []models.Message {
	l.t.Helper()
	msgs, err := l.rt.Store.Messages(context.Background(), session)
	if err != nil {
		l.t.Fatal(err)
	}
	return msgs
}

// sent counts the occurrences of text in the messages of every request the
// model received (a nudge may be merged into the user message before it).
func (l *loopRun) sent(text string) int {
	n := 0
	for _, r := range l.model.Requests() {
		for _, m := range r.Body.Messages {
			n += strings.Count(m.Content, text)
		}
	}
	return n
}

// lastSent is the last message of request i.
func (l *loopRun) lastSent(i int) openai.ChatCompletionMessage {
	l.t.Helper()
	reqs := l.model.Requests()
	if i >= len(reqs) {
		l.t.Fatalf("request %d of %d", i, len(reqs))
	}
	m, _ := reqs[i].LastMessage()
	return m
}

func expect(t *testing.T, res workflows.ConversationResult, reason workflows.StopReason, completed, partial bool, calls int) {
	t.Helper()
	if res.TurnExitReason != reason || res.Completed != completed || res.Partial != partial || (calls > 0 && res.APICalls != calls) {
		msg := ""
		if res.Error != nil {
			msg = *res.Error
		}
		t.Fatalf("result: reason=%s completed=%v partial=%v api_calls=%d error=%q; want %s %v %v %d",
			res.TurnExitReason, res.Completed, res.Partial, res.APICalls, msg, reason, completed, partial, calls)
	}
}

func finalText(t *testing.T, res workflows.ConversationResult) string {
	t.Helper()
	if res.FinalResponse == nil {
		t.Fatal("no final response")
	}
	return *res.FinalResponse
}

func roleList(msgs []models.Message) string {
	r := make([]string, 0, len(msgs))
	for _, m := range msgs {
		r = append(r, m.Role)
	}
	return strings.Join(r, ",")
}

// assertAnswered checks that every tool call in the transcript has exactly
// one result, right after its assistant message.
func assertAnswered(t *testing.T, msgs []models.Message) {
	t.Helper()
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == "tool" {
			t.Fatalf("message %d: result %s not after its call", i, m.ToolCallID)
		}
		for j, c := range m.ToolCalls {
			k := i + 1 + j
			if k >= len(msgs) || msgs[k].Role != "tool" || msgs[k].ToolCallID != c.ID {
				t.Fatalf("call %s of message %d unanswered", c.ID, i)
			}
		}
		i += len(m.ToolCalls)
	}
}

func toolStep(name, args string) fakellm.Step {
	return fakellm.ToolStep(fakellm.ToolCall{Name: name, Arguments: args})
}
