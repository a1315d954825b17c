package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/testsuite"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/approval"
	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/transcript"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// maxHistoryPayload is the test's bound on any activity input or result.
const maxHistoryPayload = 256 << 10

// shapeKnown are the tools a fuzzed reply may name; none of them runs a
// command.
var shapeKnown = []string{"clarify", "read_file", "todo"}

// hostileReply builds a model reply from the fuzzer's choices: text
// repeated up to megabytes, up to 200 calls whose ids are missing,
// duplicated, huge or normal, whose names are known, near-known, empty or
// huge, and whose arguments are valid, invalid, huge or hold NUL bytes.
func hostileReply(text string, repeat uint16, calls uint8, idMode, nameMode, argMode uint8) (string, []openai.ToolCall) {
	content := strings.Repeat(text, int(repeat)%(3<<20/max(len(text), 1)+1))
	n := int(calls) % 201
	out := make([]openai.ToolCall, 0, n)
	for i := range n {
		var id, name, args string
		switch (int(idMode) + i) % 5 {
		case 0:
			id = fmt.Sprintf("call_%d", i)
		case 1:
			id = "same"
		case 2:
			id = ""
		case 3:
			id = strings.Repeat("i", 300<<10)
		case 4:
			id = fmt.Sprintf("id\x00%d\xff", i)
		}
		k := i
		if nameMode >= 128 { // every call the same kind
			k = 0
		}
		switch (int(nameMode) + k) % 6 {
		case 0:
			name = "read_file"
		case 1:
			name = "todo"
		case 2:
			name = "Read_File"
		case 3:
			name = ""
		case 4:
			name = strings.Repeat("n", 1<<20)
		case 5:
			name = "clarify"
		}
		k = i
		if argMode >= 128 {
			k = 0
		}
		switch (int(argMode) + k) % 6 {
		case 0:
			args = `{"path":"notes.txt"}`
		case 1:
			args = `{"path":`
		case 2:
			args = `{"path":"` + strings.Repeat("p", 1<<20) + `"}`
		case 3:
			args = "{\"path\":\"a\x00b\"}"
		case 4:
			args = `{"question":"` + strings.Repeat("q", 100<<10) + `","choices":["` + strings.Repeat("c\u0001", 10<<10) +
				`"` + strings.Repeat(`,"`+strings.Repeat("d", 2000)+`"`, 30) + `]}`
		case 5:
			args = `{"todos":[{"id":"1","content":"` + text + `","status":"pending"}]}`
		}
		out = append(out, openai.ToolCall{ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: args}})
	}
	return content, out
}

// FuzzReplyShapes runs hostile replies through the real path of a turn:
// stored in a real SQLite store as CallModel stores them, described,
// decided on by the loop, their tools run by ExecuteTools and the answer
// finished by FinishTurn (in Temporal's activity test environment, which
// encodes inputs and results as the worker does). Nothing panics, the
// store takes every reply (no shape is refused by design: text is stored
// losslessly), every stored call id of a batch the loop ran has exactly
// one stored result (in the store as written, before any repair) and is
// answered exactly once in the transcript as sent to the model, and no
// activity input or result encodes to more than 256 KB.
func FuzzReplyShapes(f *testing.F) {
	f.Add("hello", uint16(1), uint8(0), uint8(0), uint8(0), uint8(0), "stop")
	f.Add("x", uint16(60000), uint8(0), uint8(0), uint8(0), uint8(0), "stop")                // a long answer
	f.Add("0123456789abcdef", uint16(65535), uint8(0), uint8(0), uint8(0), uint8(0), "stop") // megabytes
	f.Add("\x00\xff nul", uint16(40000), uint8(0), uint8(0), uint8(0), uint8(0), "stop")     // NUL and invalid UTF-8
	f.Add("", uint16(0), uint8(100), uint8(0), uint8(0), uint8(0), "tool_calls")             // 100 valid reads
	f.Add("", uint16(0), uint8(100), uint8(1), uint8(1), uint8(1), "tool_calls")             // mixed everything
	f.Add("go", uint16(3), uint8(120), uint8(3), uint8(4), uint8(2), "tool_calls")           // huge ids, names, args
	f.Add("", uint16(0), uint8(7), uint8(2), uint8(5), uint8(4), "tool_calls")               // clarify, huge question
	f.Add("partial", uint16(1000), uint8(3), uint8(0), uint8(0), uint8(1), "length")         // cut off
	f.Add("", uint16(0), uint8(1), uint8(3), uint8(3), uint8(3), "")                         // one call, nothing valid
	f.Add("t", uint16(1), uint8(30), uint8(4), uint8(2), uint8(5), "tool_calls")             // ids with NUL bytes
	f.Add("", uint16(0), uint8(200), uint8(0), uint8(128+3), uint8(128+2), "tool_calls")     // 200 clarify calls (128 kept), huge questions and choices
	f.Add("", uint16(0), uint8(120), uint8(0), uint8(128+4), uint8(128+4), "tool_calls")     // 120 valid reads, ids of every kind
	ctx := context.Background()
	work := f.TempDir()
	store, err := models.Open(ctx, filepath.Join(f.TempDir(), "talaria.db"))
	if err != nil {
		f.Fatal(err)
	}
	if err := writeNotes(work); err != nil {
		f.Fatal(err)
	}
	a := &activities.Activities{Store: store, Tools: tools.Default(), Home: f.TempDir()}
	var sessions atomic.Int64
	f.Fuzz(func(t *testing.T, text string, repeat uint16, calls, idMode, nameMode, argMode uint8, finish string) {
		session := fmt.Sprintf("s%d", sessions.Add(1))
		turn := TurnWorkflowID(session, 1)
		if _, err := store.EnsureSession(ctx, session, "m"); err != nil {
			t.Fatal(err)
		}
		content, raw := hostileReply(text, repeat, calls, idMode, nameMode, argMode)
		content, stored := activities.BoundReply(content, activities.RepairCalls(transcript.ToolCallsFromOpenAI(raw, "call_1_"), shapeKnown))
		msg := models.Message{SessionID: session, TurnID: turn, IdemKey: turn + "/call-1/assistant",
			Role: openai.ChatMessageRoleAssistant, Content: content, ToolCalls: stored, FinishReason: finish}
		pre := activities.DescribeReplyIn(&msg, shapeKnown, approval.Where{})
		msg.Hidden = pre.Kind.Discarded() || anyInvalid(pre)
		rows, err := store.AppendMessages(ctx, []models.Message{msg})
		if err != nil {
			t.Fatalf("the store refused a reply of %d bytes and %d calls: %v", len(content), len(stored), err)
		}
		reply := activities.DescribeReplyIn(&rows[0], shapeKnown, approval.Where{})
		assertSmallPayload(t, "CallModelResult", reply)

		st := NewTurnState(10)
		st.Providers = 1
		step, _ := decide(st, reply, currentLimits(reply))
		switch step.Kind {
		case StepRunTools:
			batch := turnapi.ExecuteToolsInput{TurnID: turn, SessionID: session, Call: 1, AssistantMessageID: reply.MessageID,
				Workdir: work, Plan: step.Plan, Reveal: step.Reveal, Explanation: step.Explanation}
			assertSmallPayload(t, "ExecuteToolsInput", batch)
			var res turnapi.ExecuteToolsResult
			runActivity(t, a.ExecuteTools, batch, &res)
			assertSmallPayload(t, "ExecuteToolsResult", res)
			assertAnsweredOnceInStore(t, store, session, reply.MessageID)
			assertAnsweredOnceInTranscript(t, store, session)
		case StepFinish, StepStop:
			if len(step.Final) == 0 {
				return
			}
			in := turnapi.FinishTurnInput{TurnID: turn, SessionID: session, TurnNumber: 1, Status: "completed",
				ExitReason: string(step.Reason), FinalParts: step.Final}
			var done turnapi.FinishTurnResult
			runActivity(t, a.FinishTurn, in, &done)
			assertSmallPayload(t, "FinishTurnResult", done)
			if want := activities.FinalText(&rows[0]); done.HasFinal && !done.Clipped && done.FinalResponse != want {
				t.Fatalf("an unclipped final answer differs from the stored one (%d vs %d bytes)", len(done.FinalResponse), len(want))
			}
		}
	})
}

// currentLimits are the limits a turn started by this code decides r with
// (decideLimits at the newest versions). Pure.
func currentLimits(r turnapi.CallModelResult) loop.Limits {
	lim := loop.DefaultLimits()
	if r.Kind == loop.ReplyToolCallCutOff && r.FinishReason != loop.FinishLength {
		lim.BrokenArgsAreInvalid = true
	}
	return lim
}

// assertAnsweredOnceInStore checks the session's messages as stored, hidden
// ones included and nothing repaired: every call id of the assistant
// message the loop ran has exactly one stored tool result after it, and no
// result answers an id that message does not hold.
func assertAnsweredOnceInStore(t *testing.T, store *models.Store, session string, assistantID int64) {
	t.Helper()
	msgs, err := store.AllMessages(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	var calls []models.ToolCall
	found := false
	answers := map[string]int{}
	for _, m := range msgs {
		switch {
		case m.ID == assistantID:
			calls, found = m.ToolCalls, true
		case found && m.Role == openai.ChatMessageRoleTool:
			answers[m.ToolCallID]++
		}
	}
	if !found {
		t.Fatalf("the assistant message %d is not in the store", assistantID)
	}
	ids := map[string]bool{}
	for _, c := range calls {
		if ids[c.ID] {
			t.Fatalf("call id %.40q is stored twice in one reply", c.ID)
		}
		ids[c.ID] = true
		if answers[c.ID] != 1 {
			t.Fatalf("stored call %.40q has %d stored results", c.ID, answers[c.ID])
		}
	}
	for id, n := range answers {
		if !ids[id] {
			t.Fatalf("%d stored results answer %.40q, which the reply does not hold", n, id)
		}
	}
}

func anyInvalid(r turnapi.CallModelResult) bool {
	for _, c := range r.ToolCalls {
		if c.Args != loop.ArgsValid {
			return true
		}
	}
	return false
}

// runActivity runs fn in Temporal's activity test environment, which
// encodes its input and result as a worker does.
func runActivity(t *testing.T, fn, in, out any) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(fn)
	val, err := env.ExecuteActivity(fn, in)
	if err != nil {
		t.Fatalf("activity failed: %v", err)
	}
	if err := val.Get(out); err != nil {
		t.Fatal(err)
	}
}

func assertSmallPayload(t *testing.T, what string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s does not encode: %v", what, err)
	}
	if len(data) > maxHistoryPayload {
		t.Fatalf("%s encodes to %d bytes, above %d", what, len(data), maxHistoryPayload)
	}
}

// assertAnsweredOnceInTranscript checks the session's messages as the model
// would receive them: every call id of an assistant message is answered by
// exactly one tool message right after it.
func assertAnsweredOnceInTranscript(t *testing.T, store *models.Store, session string) {
	t.Helper()
	msgs, err := store.Messages(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	wire := transcript.Repair(transcript.ToOpenAI(msgs))
	for i, m := range wire {
		if len(m.ToolCalls) == 0 {
			continue
		}
		answers := map[string]int{}
		for _, r := range wire[i+1:] {
			if r.Role != openai.ChatMessageRoleTool {
				break
			}
			answers[r.ToolCallID]++
		}
		for _, c := range m.ToolCalls {
			if answers[c.ID] != 1 {
				t.Fatalf("call %.40q is answered %d times", c.ID, answers[c.ID])
			}
		}
		if len(answers) != len(m.ToolCalls) {
			t.Fatalf("%d calls, %d distinct answers", len(m.ToolCalls), len(answers))
		}
	}
}

func writeNotes(dir string) error {
	return os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("a short note\n"), 0o600)
}
