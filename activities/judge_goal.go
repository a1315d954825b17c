package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/textline"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// judgeTranscriptBytes bounds the end of the conversation the judge reads.
const judgeTranscriptBytes = 24 << 10

// JudgeGoal asks the model, without tools, whether the conversation has
// reached its goal: done, continue or blocked, with a reason. An answer it
// cannot read counts as continue (the goal's budgets bound the rest).
func (a *Activities) JudgeGoal(ctx context.Context, in turnapi.JudgeGoalInput) (turnapi.JudgeGoalResult, error) {
	tip, err := a.Store.Tip(ctx, in.SessionID)
	if err != nil {
		return turnapi.JudgeGoalResult{}, fmt.Errorf("judge goal: %w", err)
	}
	msgs, err := a.Store.Messages(ctx, tip)
	if err != nil {
		return turnapi.JudgeGoalResult{}, fmt.Errorf("judge goal: %w", err)
	}
	var lines []string
	size := 0
	for i := len(msgs) - 1; i >= 0 && size < judgeTranscriptBytes; i-- {
		m := msgs[i]
		text := strings.TrimSpace(m.Content)
		for _, c := range m.ToolCalls {
			text += " [calls " + c.Function.Name + "]"
		}
		if text == "" || m.Hidden || m.Role == openai.ChatMessageRoleSystem {
			continue
		}
		line := m.Role + ": " + clip(text, 2000)
		lines = append([]string{line}, lines...)
		size += len(line)
	}
	prompt := turnapi.JudgeGoalMarker + "\n\nAn agent is working toward this goal:\n" + in.Goal +
		"\n\nThe end of its work so far:\n" + strings.Join(lines, "\n") +
		"\n\nIs the goal reached? Answer with one JSON object and nothing else: " +
		`{"verdict": "done" | "continue" | "blocked", "reason": "one sentence"}` +
		`. "done": the goal is reached; "continue": progress is being made and more work remains; "blocked": it cannot go on without help.`
	provider, err := a.provider(in.Model, 0)
	if err != nil {
		return turnapi.JudgeGoalResult{}, fmt.Errorf("judge goal: %w", err)
	}
	work, stop := a.heartbeat(ctx, func() any { return "judge" })
	reply, err := a.callModel(work, provider, llm.Request{Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: prompt},
	}}, llm.Options{IdleTimeout: orDefault(in.IdleTimeout, DefaultModelIdleTimeout)})
	stop()
	if err != nil {
		return turnapi.JudgeGoalResult{}, fmt.Errorf("judge goal: %w", modelError(work, err, in.MaxRetryAfter))
	}
	// The call answered: it is recorded whatever became of the attempt.
	keep, cancel := storeContext(ctx)
	defer cancel()
	usage, err := a.recordCall(keep, callRecord{Key: activityKey(ctx, models.PurposeJudge), Purpose: models.PurposeJudge,
		SessionID: in.SessionID}, provider, reply.Usage)
	if err != nil {
		return turnapi.JudgeGoalResult{}, fmt.Errorf("judge goal: %w", err)
	}
	v := ParseVerdict(reply.Content)
	v.Usage = usage
	return v, nil
}

// ParseVerdict reads the judge's answer: the first JSON object in it, or a
// verdict word; anything else is continue. Pure.
func ParseVerdict(text string) turnapi.JudgeGoalResult {
	var v struct{ Verdict, Reason string }
	if i, j := strings.Index(text, "{"), strings.LastIndex(text, "}"); i >= 0 && j > i && json.Unmarshal([]byte(text[i:j+1]), &v) == nil {
		switch verdict := strings.ToLower(strings.TrimSpace(v.Verdict)); verdict {
		case turnapi.VerdictDone, turnapi.VerdictContinue, turnapi.VerdictBlocked:
			return turnapi.JudgeGoalResult{Verdict: verdict, Reason: textline.Of(v.Reason, 300)}
		}
	}
	word := strings.ToLower(strings.Trim(strings.TrimSpace(text), ".!\"'`*"))
	for _, verdict := range []string{turnapi.VerdictDone, turnapi.VerdictBlocked, turnapi.VerdictContinue} {
		if word == verdict {
			return turnapi.JudgeGoalResult{Verdict: verdict}
		}
	}
	return turnapi.JudgeGoalResult{Verdict: turnapi.VerdictContinue, Reason: "the check's answer could not be read: " + textline.Of(text, 120)}
}
