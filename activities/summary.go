package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/transcript"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// Bounds of a session summary.
const (
	// summaryTranscriptBytes bounds the transcript the summariser reads
	// (its most recent part).
	summaryTranscriptBytes = 48 << 10
	// summaryMaxTokens and summaryMaxBytes bound the summary.
	summaryMaxTokens = 400
	summaryMaxBytes  = 1500
)

// SummaryPrompt asks the session's model for its summary.
const SummaryPrompt = "Summarise the conversation above for recall in later conversations, in at most 120 words: " +
	"its topic, the decisions made, and the facts learned (names, versions, numbers, preferences). " +
	"Plain text, no preamble."

// SummarizeSession writes the summary of a session that ended (memory
// recall): the given text when there is one (a compaction's summary), else
// the session's model's summary of its transcript; with an embeddings
// endpoint, its vector too. A session already summarised at its current
// turn count is left as it is. Then, the summary known, the memory
// provider is told of the session's end with it (endSession): the one
// written now, or the one stored already ("" without a conversation). A
// summary that fails fails the activity before the provider is told; its
// retry tells it.
func (a *Activities) SummarizeSession(ctx context.Context, in turnapi.SummarizeSessionInput) (turnapi.SummarizeSessionResult, error) {
	sess, err := a.Store.Session(ctx, in.SessionID)
	if errors.Is(err, models.ErrNotFound) {
		return turnapi.SummarizeSessionResult{}, nil // deleted meanwhile: nothing to remember
	}
	if err != nil {
		return turnapi.SummarizeSessionResult{}, fmt.Errorf("summarise session: %w", err)
	}
	summary, written, err := a.sessionSummary(ctx, sess, in)
	if err != nil {
		return turnapi.SummarizeSessionResult{}, err
	}
	a.endSession(ctx, in, sess.Owner, summary)
	return turnapi.SummarizeSessionResult{Written: written}, nil
}

// sessionSummary is the session's summary and whether it was written now:
// the one stored when the session was summarised at its current turn
// count already (and no text is given), else the one written now; ""
// when the session has no conversation.
func (a *Activities) sessionSummary(ctx context.Context, sess *models.Session, in turnapi.SummarizeSessionInput) (string, bool, error) {
	if have, err := a.Store.Summary(ctx, in.SessionID); err == nil && summarisedAlready(have.Turns, sess.TurnCount, in.Text) {
		return have.Summary, false, nil
	}
	text, model := in.Text, in.Model
	if text == "" {
		var err error
		if text, model, err = a.summariseTranscript(ctx, sess); err != nil {
			return "", false, err
		}
		if text == "" {
			return "", false, nil // no conversation
		}
	}
	sum := models.SessionSummary{SessionID: sess.ID, Summary: boundSummary(text), Model: model, Turns: sess.TurnCount}
	if a.Embed != nil {
		vec, err := a.Embed.Embed(ctx, []string{sum.Summary})
		if err != nil {
			a.logger().Warn("recall: no vector for the session's summary (embeddings endpoint)", "session", sess.ID, "error", err)
		} else {
			sum.Embedding = models.EncodeVector(vec[0])
		}
	}
	if err := a.Store.PutSummary(ctx, sum); err != nil {
		return "", false, fmt.Errorf("summarise session: %w", err)
	}
	return sum.Summary, true, nil
}

// summarisedAlready says whether a stored summary written at turns serves
// a session now at count: it does unless the session went on since or a
// summary is given (a compaction's, which replaces it). Pure.
func summarisedAlready(turns, count int, given string) bool {
	return turns >= count && given == ""
}

// summariseTranscript asks the session's model (the worker's when it has
// none) for the summary of its visible messages; "" when it has none.
func (a *Activities) summariseTranscript(ctx context.Context, sess *models.Session) (string, string, error) {
	msgs, err := a.Store.Messages(ctx, sess.ID)
	if err != nil {
		return "", "", fmt.Errorf("summarise session %s: %w", sess.ID, err)
	}
	text := summaryTranscript(msgs, summaryTranscriptBytes)
	if text == "" {
		return "", "", nil
	}
	provider, err := a.provider(sess.Model, 0)
	if err != nil {
		return "", "", err
	}
	req := llm.Request{MaxTokens: summaryMaxTokens, Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: text + "\n\n" + SummaryPrompt},
	}}
	work, stop := a.heartbeat(ctx, func() any { return "summary" })
	reply, err := a.callModel(work, provider, req, llm.Options{IdleTimeout: DefaultModelIdleTimeout})
	stop()
	if err != nil {
		return "", "", fmt.Errorf("summarise session %s: %w", sess.ID, modelError(work, err, 0))
	}
	keep, cancel := storeContext(ctx)
	defer cancel()
	rec := callRecord{Key: activityKey(ctx, models.PurposeSummary), Purpose: models.PurposeSummary, SessionID: sess.ID}
	if _, err := a.recordCall(keep, rec, provider, reply.Usage); err != nil {
		return "", "", fmt.Errorf("summarise session %s: %w", sess.ID, err)
	}
	return reply.Content, provider.Model, nil
}

// summaryTranscript is the most recent part of a conversation, at most n
// bytes, one line per user or assistant message ("" when there is none).
// Pure.
func summaryTranscript(msgs []models.Message, n int) string {
	var lines []string
	size := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if (m.Role != openai.ChatMessageRoleUser && m.Role != openai.ChatMessageRoleAssistant) || m.Content == "" {
			continue
		}
		line := m.Role + ": " + clip(m.Content, 2000)
		if size+len(line) > n {
			break
		}
		size += len(line) + 1
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return ""
	}
	out := "Conversation:\n"
	for i := len(lines) - 1; i >= 0; i-- {
		out += lines[i] + "\n"
	}
	return out
}

// boundSummary is a summary as stored: without thinking, trimmed, at most
// summaryMaxBytes. Pure.
func boundSummary(s string) string {
	return clip(strings.TrimSpace(transcript.RemoveThinking(s)), summaryMaxBytes)
}
